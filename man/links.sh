#!/bin/sh
# links.sh -- the names a section-3 page documents, and their links.
#
#   links.sh list PAGE...            print "NAME PAGE" for every .Nm name
#                                    in the NAME section of each page
#   links.sh install DIR PAGE...     make DIR/NAME.3 a link to the page for
#                                    every name but the page's own, so that
#                                    "man tw_close" finds tw_open.3
#   links.sh uninstall DIR PAGE...   remove those links
#
# The pages' NAME sections are the one list of names: make install
# (install-data-hook) and make uninstall (uninstall-hook) call this, and
# tests/check_man.sh compares its list with the header.  LN_S (from
# configure; default "ln -s") makes the links.  Exit status: 0, or 1 on an
# error (message on stderr).

names()
{
  # ".Nm tw_close ," -> "tw_close", between ".Sh NAME" and the next .Sh.
  sed -n '/^\.Sh NAME/,/^\.Sh /{
    /^\.Nm /{
      s/^\.Nm[[:space:]]*\([^[:space:],]*\).*/\1/p
    }
  }' "$1"
}

mode=$1
shift || exit 1
case $mode in
  list)
    for page in "$@"; do
      [ -r "$page" ] || { echo "links.sh: cannot read $page" >&2; exit 1; }
      for name in $(names "$page"); do
        echo "$name ${page##*/}"
      done
    done
    ;;
  install|uninstall)
    dir=$1
    shift || exit 1
    for page in "$@"; do
      base=${page##*/}
      [ -r "$page" ] || { echo "links.sh: cannot read $page" >&2; exit 1; }
      for name in $(names "$page"); do
        [ "$name.3" = "$base" ] && continue
        rm -f "$dir/$name.3" || exit 1
        [ "$mode" = uninstall ] && continue
        echo "  LN       $dir/$name.3 -> $base"
        (cd "$dir" && ${LN_S:-ln -s} "$base" "$name.3") || exit 1
      done
    done
    ;;
  *)
    echo "usage: links.sh list PAGE... | install DIR PAGE... | uninstall DIR PAGE..." >&2
    exit 1
    ;;
esac
