import { createContext, useContext, type ReactNode } from 'react';
import type { Connection } from './connection.js';

const ConnectionContext = createContext<Connection | undefined>(undefined);

/** Makes the app's one Connection available to the hooks below it. */
export function ConnectionProvider({ connection, children }: { connection: Connection; children: ReactNode }) {
  return <ConnectionContext.Provider value={connection}>{children}</ConnectionContext.Provider>;
}

/** The app's Connection. Throws (a programming error) when used outside ConnectionProvider. */
export function useConnection(): Connection {
  const connection = useContext(ConnectionContext);
  if (connection === undefined) throw new Error('useConnection() must be used inside <ConnectionProvider>');
  return connection;
}
