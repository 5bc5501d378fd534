# shellcheck shell=bash
# Sourced by the scripts that debootstrap a Debian root (.ci/fresh-root.sh, .ci/aarch64.sh,
# tools/bullseye-root.sh). debian_mirror prints the Debian mirror this machine's apt already
# uses, so a root is made from the same place as the host's packages; nothing when it uses none
# that can be told (then debootstrap is called without a mirror and takes its own default).
# $DENPEX_DEBIAN_MIRROR, when set, wins.
#
# Read, in order: /etc/apt/sources.list.d/*.sources (deb822: the first enabled `Types: deb`
# stanza whose Suites name a release, not an -updates or -security suite) and
# /etc/apt/sources.list with /etc/apt/sources.list.d/*.list (the first `deb` line of such a
# suite). Never fails.
debian_mirror() {
  if [ -n "${DENPEX_DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "$DENPEX_DEBIAN_MIRROR"
    return 0
  fi
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    uri=$(awk '
      function flush() {
        if (deb && enabled && release && uri != "") { print uri; found = 1; exit }
        deb = 0; enabled = 1; release = 0; uri = ""
      }
      BEGIN { enabled = 1 }
      /^[ \t]*$/ { flush(); next }
      /^#/ { next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "enabled:" { if (tolower($2) == "no") enabled = 0 }
      tolower($1) == "uris:" { uri = $2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i !~ /-/) release = 1 }
      END { if (!found) flush() }' "$f" 2>/dev/null)
    if [ -n "$uri" ]; then
      printf '%s\n' "$uri"
      return 0
    fi
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    # deb [options] URI SUITE COMPONENT...
    uri=$(awk '$1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) !~ /-/ && $(i + 1) != "") { print $i; exit }
      }' "$f" 2>/dev/null)
    if [ -n "$uri" ]; then
      printf '%s\n' "$uri"
      return 0
    fi
  done
  return 0
}
