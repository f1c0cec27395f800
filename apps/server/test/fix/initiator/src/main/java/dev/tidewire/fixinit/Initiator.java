package dev.tidewire.fixinit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import quickfix.Application;
import quickfix.DefaultMessageFactory;
import quickfix.FieldNotFound;
import quickfix.FileStoreFactory;
import quickfix.Message;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.SessionNotFound;
import quickfix.SessionSettings;
import quickfix.SocketInitiator;

/**
 * A QuickFIX/J initiator for one session, driven over stdin/stdout (one line each):
 *
 * <pre>
 * args:  host port beginString senderCompID targetCompID storeDir
 * in:    send &lt;MsgType&gt; tag=value|tag=value|...   (body fields; QuickFIX/J writes the header)
 *        logout                                      (Logout, then wait for the answer)
 *        exit                                        (stop and exit)
 * out:   logon &lt;next sender seq&gt; &lt;next target seq&gt;
 *        logout
 *        app &lt;message&gt;        every application message received (fields joined by |)
 *        admin-in &lt;message&gt;   admin messages received, heartbeats excepted
 *        admin-out &lt;message&gt;  admin messages sent, heartbeats excepted (a Reject of ours shows here)
 * </pre>
 *
 * QuickFIX/J validates what it receives against its own FIX42.xml / FIX44.xml: a report it finds
 * wrong is rejected (admin-out 35=3) and never reaches "app". Sequence numbers persist in storeDir.
 */
public final class Initiator implements Application {
    private final PrintStream out;

    private Initiator(PrintStream out) {
        this.out = out;
    }

    private synchronized void line(String s) {
        out.println(s);
        out.flush();
    }

    private void emit(String kind, Message m) {
        line(kind + " " + m.toString().replace('\u0001', '|'));
    }

    private static String type(Message m) {
        try {
            return m.getHeader().getString(35);
        } catch (FieldNotFound e) {
            return "";
        }
    }

    @Override
    public void onCreate(SessionID id) {}

    @Override
    public void onLogon(SessionID id) {
        Session s = Session.lookupSession(id);
        try {
            line("logon " + s.getStore().getNextSenderMsgSeqNum() + " " + s.getStore().getNextTargetMsgSeqNum());
        } catch (IOException e) {
            line("logon ? ?");
        }
    }

    @Override
    public void onLogout(SessionID id) {
        line("logout");
    }

    @Override
    public void toAdmin(Message m, SessionID id) {
        if (!type(m).equals("0")) emit("admin-out", m);
    }

    @Override
    public void fromAdmin(Message m, SessionID id) {
        if (!type(m).equals("0")) emit("admin-in", m);
    }

    @Override
    public void toApp(Message m, SessionID id) {}

    @Override
    public void fromApp(Message m, SessionID id) {
        emit("app", m);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: Initiator host port beginString senderCompID targetCompID storeDir");
            System.exit(2);
        }
        SessionID id = new SessionID(args[2], args[3], args[4]);
        SessionSettings settings = new SessionSettings();
        settings.setString("ConnectionType", "initiator");
        settings.setString("NonStopSession", "Y");
        settings.setString("HeartBtInt", "30");
        settings.setString("ReconnectInterval", "1");
        settings.setString("FileStorePath", args[5]);
        settings.setString("UseDataDictionary", "Y");
        settings.setString(id, "BeginString", args[2]);
        settings.setString(id, "SenderCompID", args[3]);
        settings.setString(id, "TargetCompID", args[4]);
        settings.setString(id, "SocketConnectHost", args[0]);
        settings.setString(id, "SocketConnectPort", args[1]);
        settings.setString(id, "DataDictionary", args[2].equals("FIX.4.4") ? "FIX44.xml" : "FIX42.xml");
        Initiator app = new Initiator(System.out);
        SocketInitiator initiator = new SocketInitiator(app, new FileStoreFactory(settings), settings, new DefaultMessageFactory());
        initiator.start();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String cmd;
        while ((cmd = in.readLine()) != null) {
            if (cmd.startsWith("send ")) {
                String[] parts = cmd.split(" ", 3);
                Message m = new Message();
                m.getHeader().setString(35, parts[1]);
                if (parts.length > 2) {
                    for (String f : parts[2].split("\\|")) {
                        int eq = f.indexOf('=');
                        if (eq > 0) m.setString(Integer.parseInt(f.substring(0, eq)), f.substring(eq + 1));
                    }
                }
                try {
                    Session.sendToTarget(m, id);
                } catch (SessionNotFound e) {
                    app.line("error session not found");
                }
            } else if (cmd.equals("logout")) {
                Session s = Session.lookupSession(id);
                if (s != null) s.logout("bye");
            } else if (cmd.equals("exit")) {
                break;
            }
        }
        initiator.stop();
        System.exit(0);
    }
}
