# Shared by build, start and test (sourced, not run): the JDK, Maven, and the build's outputs.

jar=target/iolab-play.jar
classpath_file=target/classpath.txt

# The JDK, as runtimes/jvm/start finds it: IOLAB_JAVA_HOME, then Temurin 25 under /usr/lib/jvm,
# then JAVA_HOME if it is 25 or newer.
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

# Maven from Debian (maven 3.8.7 on bookworm) when it is missing.
ensure_maven() {
  command -v mvn >/dev/null && return 0
  echo "play: installing Debian's maven package ..." >&2
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  apt_maven() {
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq -o DPkg::Lock::Timeout=600 maven >&2
  }
  install_run apt_maven ||
    { echo "error: Maven is missing and apt-get could not install it: apt-get install maven" >&2; return 1; }
}

# The build's stamp: a hash of pom.xml and src/ (runtimes/lib/install.sh), and the JDK.
stamp_file=target/.build-stamp
stamp_want() {
  echo "$(sources_stamp pom.xml src) $1"
}

# The jar and classpath exist, the stamp says pom.xml, src/ and the JDK ($1) are as built,
# and every dependency jar is still in ~/.m2.
up_to_date() {
  [ -f "$jar" ] && [ -f "$classpath_file" ] || return 1
  [ "$(cat "$stamp_file" 2>/dev/null)" = "$(stamp_want "$1")" ] || return 1
  local IFS=: f
  for f in $(cat "$classpath_file"); do [ -f "$f" ] || return 1; done
}

# The JVM's options: quiet about Pekko's and Netty-style Unsafe use on JDK 25 (JVM-NOTES.md), and
# a temp folder of our own.
java_opts() {
  echo --sun-misc-unsafe-memory-access=allow --enable-native-access=ALL-UNNAMED -Djava.io.tmpdir=target/tmp
}
