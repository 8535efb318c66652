# Sourced by build, start and test: finds the JDK 25 as runtimes/jvm/start does.
# IOLAB_JAVA_HOME, then Temurin 25 under /usr/lib/jvm, then JAVA_HOME if it is 25+.
find_jdk() {
  local c v
  for c in "${IOLAB_JAVA_HOME:-}" /usr/lib/jvm/temurin-25* "${JAVA_HOME:-}"; do
    [ -n "$c" ] && [ -x "$c/bin/java" ] || continue
    v=$("$c/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    if [ "${v%%.*}" -ge 25 ] 2>/dev/null; then echo "$c"; return 0; fi
  done
  echo "error: no JDK 25 found: install Temurin 25 under /usr/lib/jvm or set IOLAB_JAVA_HOME" >&2
  return 1
}

# Options that keep JDK 25 quiet about Akka's sun.misc.Unsafe and the native loads of
# Maven's plugins (see /work/shared/JVM-NOTES.md).
JDK25_OPTS="--sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED"
