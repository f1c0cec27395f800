#!/usr/bin/env bash
# Builds (once) and runs the QuickFIX/J echo acceptor on 127.0.0.1:<port> (default 9878).
# Needs Java 17 and Maven; the first build downloads QuickFIX/J 2.3.1 from Maven Central.
set -euo pipefail
cd "$(dirname "$0")"
port="${1:-9878}"
if [ ! -f target/fix-peer-0.1.0.jar ]; then
  mvn -q -DskipTests package
fi
exec java -Xms512m -Xmx512m -cp "target/fix-peer-0.1.0.jar:target/dependency/*" \
  dev.tidewire.fixpeer.EchoAcceptor echo.cfg "$port"
