# Sourced by ./parley and ./test: exports JAVA_HOME pointing at a JDK >= 21 and sets
# PARLEY_JAVA_MAJOR to its feature version.
# Order: $JAVA_HOME when it is new enough, then the newest JDK under /usr/lib/jvm
# (or $PARLEY_JVM_DIR), else a clear failure.
# Every client command of ./parley sources this, so it starts no process when the JDK has a
# release file: a fork costs a client command 5-10 ms on a busy 2-core machine.

parley_java_major() {
  # Sets java_major to the feature version of the java binary given, or to nothing: read from
  # its JDK's release file (JAVA_VERSION="25.0.3"), which costs no JVM start; else asked of the
  # JVM. A variable, not output: reading output would fork a subshell.
  local release="${1%/bin/java}/release" line
  java_major=""
  if [ -f "$release" ]; then
    while IFS= read -r line; do
      case "$line" in
        JAVA_VERSION=*) line="${line#JAVA_VERSION=\"}"; java_major="${line%%[.\"]*}"; return 0 ;;
      esac
    done < "$release"
  fi
  java_major="$("$1" -XshowSettings:properties -version 2>&1 \
    | awk -F'= ' '/java.specification.version/ {print $2; exit}' | cut -d. -f1)"
}

parley_pick_jdk() {
  local candidate best="" best_major=0 java_major
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    parley_java_major "$JAVA_HOME/bin/java"
    if [ -n "$java_major" ] && [ "$java_major" -ge 21 ]; then
      export JAVA_HOME
      PARLEY_JAVA_MAJOR="$java_major"
      return 0
    fi
  fi
  for candidate in "${PARLEY_JVM_DIR:-/usr/lib/jvm}"/*; do
    [ -x "$candidate/bin/javac" ] || continue
    [ -L "$candidate" ] && continue
    parley_java_major "$candidate/bin/java"
    if [ -n "$java_major" ] && [ "$java_major" -ge 21 ] && [ "$java_major" -gt "$best_major" ]; then
      best="$candidate"; best_major="$java_major"
    fi
  done
  if [ -z "$best" ]; then
    echo "parley: no JDK >= 21 found (JAVA_HOME=${JAVA_HOME:-unset}, searched ${PARLEY_JVM_DIR:-/usr/lib/jvm})." >&2
    echo "parley: install one (e.g. Temurin 21 or newer) or point JAVA_HOME at it." >&2
    return 1
  fi
  export JAVA_HOME="$best"
  PARLEY_JAVA_MAJOR="$best_major"
}

parley_pick_jdk || exit 1
export PATH="$JAVA_HOME/bin:$PATH"
