#!/bin/sh
# check_comments.sh -- the comments of src/ and tools/ name only what
# exists.
#
# A reader of the lock, commit and signal code has little else to go on
# than its comments, so two cheap checks keep them from naming what is
# gone:
#  - every file name a comment mentions (NAME.c, NAME.h) exists: in the
#    source tree (src/, tools/, include/, tests/), or as a system header;
#  - src/writer.h's index, its "---- FILE.c" sections: every function
#    declared under a section is defined in that file.
# Environment (set by make check): top_srcdir.  Exit status: 0 passed,
# 1 a check failed.

top_srcdir=${top_srcdir:-.}
cd "$top_srcdir" || exit 99
status=0

# Comment text only: from "/*" to "*/", and lines of a comment's body.
comments()
{
  awk '
    { line = $0; out = ""
      while (line != "") {
        if (!inc) {
          i = index(line, "/*"); if (!i) break
          line = substr(line, i + 2); inc = 1
        } else {
          j = index(line, "*/")
          if (!j) { out = out " " line; break }
          out = out " " substr(line, 1, j - 1); line = substr(line, j + 2)
          inc = 0
        }
      }
      if (out != "") printf "%s:%d:%s\n", FILENAME, FNR, out
    }' "$@"
}

exists()
{
  for d in . src tools include tests /usr/include \
           /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
    [ -e "$d/$1" ] && return 0
  done
  # Made by configure in the build tree.
  [ "$1" = config.h ]
}

files=$(ls src/*.c src/*.h tools/*.c tools/*.h 2>/dev/null)
# shellcheck disable=SC2086 # a list of file names without spaces
# Each name a comment mentions, with where: "NAME FILE:LINE", one awk pass
# (a process per comment line took seconds); then each name checked once.
comments $files |
  awk '{
      where = $0; sub(/:[^:]*$/, "", where)   # FILE:LINE
      text = $0; sub(/^[^:]*:[^:]*:/, "", text)
      while (match(text, /[A-Za-z0-9_.\/-]+\.[ch]([^A-Za-z0-9_]|$)/)) {
        name = substr(text, RSTART, RLENGTH)
        sub(/[^A-Za-z0-9_]$/, "", name)
        sub(/^\.\//, "", name)
        print name, where
        text = substr(text, RSTART + RLENGTH)
      }
    }' | sort -u |
  while read -r name where; do
    if [ "$name" != "$checked" ]; then
      checked=$name
      exists "$name"; missing=$?
    fi
    [ "$missing" = 0 ] ||
      echo "$where: a comment names $name, which does not exist"
  done >"${TMPDIR:-/tmp}/check_comments.$$"
if [ -s "${TMPDIR:-/tmp}/check_comments.$$" ]; then
  cat "${TMPDIR:-/tmp}/check_comments.$$"
  status=1
fi
rm -f "${TMPDIR:-/tmp}/check_comments.$$"

# writer.h's sections: "/* ---...--- FILE.c */", then declarations.
awk '
  /^\/\* -+ [a-z_]+\.c \*\// { file = $(NF - 1); next }
  file != "" && /^[a-z].*[a-z_0-9]+\(/ {
    decl = $0
    if (match(decl, /tw__[a-z_0-9]+\(/))
      print file, substr(decl, RSTART, RLENGTH - 1)
  }' src/writer.h |
  while read -r file fn; do
    grep -qE "^[a-z].*[ *]$fn\(" "src/$file" ||
      echo "src/writer.h: $fn is listed under $file but not defined there"
  done >"${TMPDIR:-/tmp}/check_index.$$"
if [ -s "${TMPDIR:-/tmp}/check_index.$$" ]; then
  cat "${TMPDIR:-/tmp}/check_index.$$"
  status=1
fi
rm -f "${TMPDIR:-/tmp}/check_index.$$"
exit $status
