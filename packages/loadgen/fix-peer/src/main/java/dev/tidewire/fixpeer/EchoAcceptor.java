package dev.tidewire.fixpeer;

import quickfix.Application;
import quickfix.DefaultMessageFactory;
import quickfix.FieldNotFound;
import quickfix.IncorrectDataFormat;
import quickfix.IncorrectTagValue;
import quickfix.MemoryStoreFactory;
import quickfix.Message;
import quickfix.ScreenLogFactory;
import quickfix.Session;
import quickfix.SessionID;
import quickfix.SessionNotFound;
import quickfix.SessionSettings;
import quickfix.SocketAcceptor;
import quickfix.UnsupportedMessageType;
import quickfix.field.MsgType;

import java.io.FileInputStream;
import java.io.InputStream;
import java.util.concurrent.CountDownLatch;

/**
 * QuickFIX/J's acceptor echoing each NewOrderSingle back on the same session as a new message
 * (QuickFIX/J fills in the standard header). Usage: EchoAcceptor settings.cfg [port].
 * Runs until killed.
 */
public final class EchoAcceptor implements Application {

    @Override
    public void onCreate(SessionID sessionId) {}

    @Override
    public void onLogon(SessionID sessionId) {
        System.out.println("logon " + sessionId);
    }

    @Override
    public void onLogout(SessionID sessionId) {
        System.out.println("logout " + sessionId);
    }

    @Override
    public void toAdmin(Message message, SessionID sessionId) {}

    @Override
    public void fromAdmin(Message message, SessionID sessionId) {}

    @Override
    public void toApp(Message message, SessionID sessionId) {}

    @Override
    public void fromApp(Message message, SessionID sessionId)
            throws FieldNotFound, IncorrectDataFormat, IncorrectTagValue, UnsupportedMessageType {
        if (!MsgType.ORDER_SINGLE.equals(message.getHeader().getString(MsgType.FIELD))) {
            throw new UnsupportedMessageType();
        }
        Message echo = (Message) message.clone();
        try {
            Session.sendToTarget(echo, sessionId);
        } catch (SessionNotFound e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: EchoAcceptor <settings.cfg> [port]");
            System.exit(2);
        }
        SessionSettings settings;
        try (InputStream in = new FileInputStream(args[0])) {
            settings = new SessionSettings(in);
        }
        if (args.length > 1) {
            settings.setString("SocketAcceptPort", args[1]);
        }
        SocketAcceptor acceptor = new SocketAcceptor(new EchoAcceptor(), new MemoryStoreFactory(), settings,
                new ScreenLogFactory(false, false, false), new DefaultMessageFactory());
        acceptor.start();
        System.out.println("listening on " + settings.getString("SocketAcceptPort"));
        Runtime.getRuntime().addShutdownHook(new Thread(acceptor::stop));
        new CountDownLatch(1).await();
    }
}
