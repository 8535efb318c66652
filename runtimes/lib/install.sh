# shellcheck shell=bash
# The install lock and the test guard, sourced by scripts/install-deps and by every runtime
# folder's build (this folder travels with the runtime folders, into the binary's cache too).
# Every package-manager call (apt-get, pip, npm, mvn, go) runs under one lock, so two installs
# never race for dpkg's lock; while the tests run (IOLAB_NO_INSTALL=1, which scripts/test sets
# after its install step) none runs: a test never installs or downloads.
#   install_run CMD ...     a pure package-manager call (apt-get, pip download, npm ci): under the
#                           lock; refused while the tests run (exit 3, one line naming it)
#   install_build CMD ...   a build that may download (mvn package, go build): under the lock;
#                           while the tests run, run as it is but offline (use $(install_mvn_offline)
#                           in its mvn argv; GOPROXY=off is exported), so it fails rather than fetch
#   sources_stamp PATH ...  a hash of the files under PATHs, names and contents: a build's stamp
#                           (jvm, play), so a build of unchanged sources returns at once and only
#                           a changed source rebuilds (mtimes do not decide: a checkout or a copy
#                           touches them without changing anything)
#   IOLAB_INSTALL_LOCK      the lock file [/tmp/iolab-install.lock]
#   IOLAB_CACHE             where downloads are kept across checkouts [~/.cache/iolab]
: "${IOLAB_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/iolab}"
export IOLAB_CACHE

install_refused() {
  echo "install refused while the tests run (IOLAB_NO_INSTALL=1): $*: scripts/install-deps installs everything before the tests; add what is missing there" >&2
  return 3
}

install_locked() {
  if [ "${IOLAB_INSTALL_HELD:-0}" = 1 ]; then
    "$@"
    return
  fi
  (
    exec 8>"${IOLAB_INSTALL_LOCK:-/tmp/iolab-install.lock}"
    flock 8
    export IOLAB_INSTALL_HELD=1
    "$@"
  )
}

install_run() {
  [ "${IOLAB_NO_INSTALL:-0}" = 1 ] && { install_refused "$*"; return 3; }
  install_locked "$@"
}

install_build() {
  if [ "${IOLAB_NO_INSTALL:-0}" = 1 ]; then
    GOPROXY=off "$@"
    return
  fi
  install_locked "$@"
}

# `-o` (Maven offline) while the tests run, nothing otherwise.
install_mvn_offline() {
  [ "${IOLAB_NO_INSTALL:-0}" = 1 ] && echo "-o"
  return 0
}

sources_stamp() {
  find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
}
