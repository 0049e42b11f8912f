# testlib.sh -- what the shell tests share.  Source it:
#   . "$(dirname "$0")/testlib.sh"
#
#   tl_setup NAME        $tmp: a new directory, removed at exit; NAME is
#                        the test's, for its messages
#   pass DESCRIPTION     one check passed
#   fail DESCRIPTION     one check failed: the first lines of each file
#                        named in $tl_show (default: $tmp/out $tmp/err)
#   check DESCRIPTION COMMAND...   pass if COMMAND succeeds, else fail
#   tl_done              "NAME: all passed", exit 0; or the count, exit 1
# Exit status 99 (the test could not run) if the directory cannot be made.

tl_failed=0
tl_name=test

tl_setup()
{
  tl_name=$1
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 99
  tl_show="$tmp/out $tmp/err"
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 1' HUP INT TERM
}

pass()
{
  echo "PASS: $1"
}

fail()
{
  tl_failed=$((tl_failed + 1))
  echo "FAIL: $1"
  for tl_file in $tl_show; do
    [ -s "$tl_file" ] && sed -n "1,15s|^|  ${tl_file##*/}: |p" "$tl_file"
  done
  return 0
}

check()
{
  tl_description=$1
  shift
  if "$@"; then pass "$tl_description"; else fail "$tl_description"; fi
}

tl_done()
{
  if [ "$tl_failed" -ne 0 ]; then
    echo "$tl_name: $tl_failed check(s) failed"
    exit 1
  fi
  echo "$tl_name: all passed"
  exit 0
}
