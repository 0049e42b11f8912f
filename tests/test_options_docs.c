/* test_options_docs.c -- the documents say what the table of keys says
 *
 * src/options.c has one table of the options string's keys (field,
 * values, bounds, default, one line of doc).  This test links
 * src/options.c itself, renders from that table the key list of
 * tw_options_init(3), the Options table of README.md and the key list of
 * tw_options_parse's comment in tracewriter.h, and fails when a document
 * differs from its rendering, printing the expected block:
 *
 *   tests/test_options_docs --print man|readme|header
 *
 * prints a block alone, to paste.  It also checks the table against the
 * parser: every default, as the documents write it, parses back to
 * tw_options_init's value, and every bound is the last value accepted.
 * The documents are read from $top_srcdir (make check sets it).
 */
#include "internal.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

/* A growing text. */
typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  assert_true(n >= 0);
  if (t->len + (size_t)n + 1 > t->cap) {
    t->cap = (t->len + (size_t)n + 1) * 2;
    t->s = realloc(t->s, t->cap);
    assert_non_null(t->s);
  }
  va_start(ap, fmt);
  vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

static int numeric(const tw__option_key *k)
{
  return k->kind == TW__KEY_SIZE || k->kind == TW__KEY_DURATION ||
         k->kind == TW__KEY_NUMBER;
}

/* The word of k whose value is v, or NULL. */
static const char *word_of(const tw__option_key *k, uint64_t v)
{
  for (const tw__key_word *w = k->words; w && w->word; w++)
    if (w->value == v)
      return w->word;
  return NULL;
}

/* A number of k as an options string writes it ("64KiB"), or, with
 * spaced, as prose does ("64 KiB"). */
static void put_number(text *t, const tw__option_key *k, uint64_t v,
                       int spaced)
{
  static const char *const units[] = { "", "KiB", "MiB", "GiB" };
  unsigned u = 0;

  while (k->kind == TW__KEY_SIZE && u < 3 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    u++;
  }
  put(t, "%llu%s%s", (unsigned long long)v, u && spaced ? " " : "",
      units[u]);
}

/* 1 if k is a number with a range ("from 256 to 1 GiB", "at least 1");
 * 0 for words and for a duration of any length. */
static int has_range(const tw__option_key *k)
{
  return numeric(k) && !(k->kind == TW__KEY_DURATION && k->min <= 1 &&
                         k->max >= tw__option_field_max(k));
}

static void put_range(text *t, const tw__option_key *k, int spaced,
                      const char *from)
{
  if (k->max >= tw__option_field_max(k)) {
    put(t, "at least ");
    put_number(t, k, k->min, spaced);
  } else {
    put(t, "%s", from);
    put_number(t, k, k->min, spaced);
    put(t, " to ");
    put_number(t, k, k->max, spaced);
  }
}

/* k's syntax: "SIZE|off", "auto|inline|background", "gzip, gzip=LEVEL". */
static void put_syntax(text *t, const tw__option_key *k)
{
  if (k->kind == TW__KEY_ALIAS) {
    put(t, "%s", k->name);
    return;
  }
  if (k->bare)
    put(t, "%s, ", k->name);
  put(t, "%s=%s", k->name, k->arg ? k->arg : "");
  for (const tw__key_word *w = k->words; w && w->word; w++)
    put(t, "%s%s", w == k->words && !k->arg ? "" : "|", w->word);
}

/* "sink=gzip" as mdoc: "Cm sink Ns = Ns Cm gzip". */
static void put_man_item(text *t, const char *item)
{
  const char *eq = strchr(item, '=');
  put(t, "Cm %.*s Ns = Ns Cm %s", (int)(eq - item), item, eq + 1);
}

/* The default of k in prose (spaced: " 64 KiB.\n", or word_fmt with the
 * word) or as in an options string ("64KiB"). */
static void put_default(text *t, const tw__option_key *k, int spaced,
                        const char *word_fmt)
{
  const char *w = word_of(k, k->def);

  if (w) {
    put(t, word_fmt, w);
  } else {
    put(t, "%s", spaced ? " " : "");
    put_number(t, k, k->def, spaced);
    put(t, "%s", spaced ? ".\n" : "");
  }
}

/* ------------------------------------------------------------ renderers */

/* doc as a sentence of mdoc text: capitalised, ended with a period, cut
 * into lines of at most 72 bytes, none beginning with a roff control
 * character ('.' or '\''). */
static void put_wrapped(text *t, const char *doc)
{
  size_t col = 0;

  for (const char *w = doc; *w;) {
    size_t n = strcspn(w, " ");
    if (col && col + 1 + n > 72 && w[0] != '.' && w[0] != '\'') {
      put(t, "\n");
      col = 0;
    } else if (col) {
      put(t, " ");
      col++;
    }
    if (w == doc)
      put(t, "%c%.*s", doc[0] - 'a' + 'A', (int)n - 1, w + 1);
    else
      put(t, "%.*s", (int)n, w);
    col += n;
    w += n + (w[n] == ' ');
  }
  put(t, ".\n");
}

/* The ".Bl" list of keys of tw_options_init(3). */
static void render_man(text *t)
{
  put(t, ".Bl -tag -width Ds\n");
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];
    char lower[32];

    put(t, ".It Cm %s", k->name);
    if (k->kind != TW__KEY_ALIAS) {
      if (k->bare)
        put(t, " , Cm %s", k->name);
      put(t, " Ns = Ns");
      if (k->arg) {
        size_t j;
        for (j = 0; k->arg[j] && j + 1 < sizeof lower; j++)
          lower[j] = (char)(k->arg[j] - 'A' + 'a');
        lower[j] = '\0';
        put(t, " Ar %s", lower);
      }
      for (const tw__key_word *w = k->words; w && w->word; w++)
        put(t, "%s%s", w == k->words && !k->arg ? " Cm " :
            w == k->words ? " | Cm " : " | ", w->word);
    }
    put(t, "\n");
    put_wrapped(t, k->doc);
    if (k->kind == TW__KEY_ALIAS) {
      put(t, "The same as\n.");
      put_man_item(t, k->bare);
      put(t, " .\n");
      continue;
    }
    if (k->kind == TW__KEY_FLAG)
      put(t, "Clears or sets\n.Dv %s\nin\n.Va flags .\n", k->flag_name);
    else if (!numeric(k))
      put(t, "Sets\n.Va %s .\n", k->field);
    else {
      put(t, "Sets\n.Va %s :\n", k->field);
      if (has_range(k))
        put_range(t, k, 1, "from ");
      else
        put(t, "a %s", k->kind == TW__KEY_DURATION ? "duration" : "number");
      if (k->words)
        put(t, ", or\n.Cm %s\nfor 0", k->words[0].word);
      if (k->also) {
        put(t, ", and applies\n.");
        put_man_item(t, k->also);
        put(t, " .\n");
      } else {
        put(t, ".\n");
      }
    }
    if (k->bare) {
      put(t, "Alone, the same as\n.");
      put_man_item(t, k->bare);
      put(t, " .\n");
    }
    put(t, "Default");
    put_default(t, k, 1, "\n.Cm %s .\n");
  }
  put(t, ".El\n");
}

/* The Options table of README.md. */
static void render_readme(text *t)
{
  put(t, "| key | values | what it does | default |\n");
  put(t, "|---|---|---|---|\n");
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];

    put(t, "| `%s` | ", k->name);
    if (k->kind == TW__KEY_ALIAS) {
      put(t, "alone: `%s`", k->bare);
    } else {
      if (k->arg) {
        put(t, "%s", k->arg);
        if (has_range(k)) {
          put(t, " (");
          put_range(t, k, 0, "");
          put(t, ")");
        }
      }
      for (const tw__key_word *w = k->words; w && w->word; w++)
        put(t, "%s`%s`", w == k->words && !k->arg ? "" : ", ", w->word);
      if (k->bare)
        put(t, "; alone: `%s`", k->bare);
    }
    put(t, " | %s | ", k->doc);
    if (k->kind != TW__KEY_ALIAS) {
      put(t, "`");
      put_default(t, k, 0, "%s");
      put(t, "`");
    }
    put(t, " |\n");
  }
}

/* The key list of tw_options_parse's comment in tracewriter.h. */
static void render_header(text *t)
{
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];
    text syntax = { NULL, 0, 0 };

    put_syntax(&syntax, k);
    put(t, " *   %-29s ", syntax.s);
    free(syntax.s);
    if (k->kind == TW__KEY_ALIAS) {
      put(t, "%s\n", k->bare);
      continue;
    }
    put(t, "%s", k->kind == TW__KEY_FLAG ? k->flag_name : k->field);
    if (has_range(k)) {
      put(t, ", ");
      put_range(t, k, 0, "");
    }
    if (k->also)
      put(t, ", and %s", k->also);
    put(t, "; default ");
    put_default(t, k, 0, "%s");
    put(t, "\n");
  }
}

/* ------------------------------------------------------- the comparison */

static char *read_doc(const char *name)
{
  const char *top = getenv("top_srcdir");
  char path[4096];
  FILE *f;
  char *buf;
  long n;

  snprintf(path, sizeof path, "%s/%s", top && *top ? top : ".", name);
  if (!(f = fopen(path, "rb")))
    fail_msg("cannot open %s (set top_srcdir)", path);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* The rendering want must appear in doc name at the first line beginning
 * with start found after the line after (NULL: from the top), and the
 * line that follows it must not begin with more (NULL: anything). */
static void check_block(const char *name, const char *after,
                        const char *start, const char *want,
                        const char *more)
{
  char *doc = read_doc(name);
  const char *p = doc, *got, *end;
  size_t line = 1, same = 0;

  if (after) {
    const char *a = strstr(doc, after);
    if (!a)
      fail_msg("%s: no line \"%s\"", name, after);
    p = a;
  }
  for (got = p; got; got = strchr(got, '\n'), got = got ? got + 1 : NULL)
    if ((got == doc || got[-1] == '\n') &&
        strncmp(got, start, strlen(start)) == 0)
      break;
  for (const char *q = doc; got && q < got; q++)
    line += *q == '\n';
  if (got && strncmp(got, want, strlen(want)) == 0) {
    end = got + strlen(want);
    if (!more || strncmp(end, more, strlen(more)) != 0) {
      free(doc);
      return;
    }
    print_error("%s:%zu: the block goes on after its last key\n", name,
                line);
  } else if (got) {
    while (got[same] && got[same] == want[same])
      line += got[same++] == '\n';
    print_error("%s:%zu: differs from the table of keys of "
                "src/options.c\n", name, line);
  } else {
    print_error("%s: no line beginning \"%s\"\n", name, start);
  }
  print_error("expected (tests/test_options_docs --print prints it):\n%s",
              want);
  free(doc);
  fail();
}

static void test_man_page(void **state)
{
  text t = { NULL, 0, 0 };

  (void)state;
  render_man(&t);
  check_block("man/tw_options_init.3", "\nThe keys:\n", ".Bl", t.s, NULL);
  free(t.s);
}

static void test_readme(void **state)
{
  text t = { NULL, 0, 0 };

  (void)state;
  render_readme(&t);
  check_block("README.md", "\n## Options\n", "|", t.s, "|");
  free(t.s);
}

static void test_header(void **state)
{
  text t = { NULL, 0, 0 };

  (void)state;
  render_header(&t);
  check_block("include/tracewriter.h", "TW_EXTERN int tw_options_init_sized",
              " *   ", t.s, " *   ");
  free(t.s);
}

/* --------------------------------------------- the table and the parser */

/* Parse "key=value" over the defaults; returns the code, the result in
 * *o. */
static int parse1(tw_options *o, const char *key, const char *value)
{
  char item[128], err[256];

  assert_int_equal(tw_options_init(o), 0);
  snprintf(item, sizeof item, "%s=%s", key, value);
  return tw_options_parse(o, item, err, sizeof err);
}

/* Every default, written as the documents write it, parses back to the
 * value tw_options_init gives. */
static void test_defaults_parse_back(void **state)
{
  tw_options d, o;

  (void)state;
  assert_int_equal(tw_options_init(&d), 0);
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];
    text t = { NULL, 0, 0 };

    if (k->kind == TW__KEY_ALIAS)
      continue;
    put_default(&t, k, 0, "%s");
    if (parse1(&o, k->name, t.s) != 0)
      fail_msg("the documented default %s=%s is refused", k->name, t.s);
    if (k->also)                       /* gzip=1 selects the gzip sink */
      o.sink = d.sink;
    if (memcmp(&o, &d, sizeof o) != 0)
      fail_msg("%s=%s is not tw_options_init's value", k->name, t.s);
    free(t.s);
  }
}

/* Every documented bound is the last value accepted. */
static void test_bounds_are_exact(void **state)
{
  tw_options o;

  (void)state;
  for (size_t i = 0; i < tw__option_nkeys; i++) {
    const tw__option_key *k = &tw__option_keys[i];
    char v[32];

    if (!numeric(k))
      continue;
    snprintf(v, sizeof v, "%llu%s", (unsigned long long)k->min,
             k->kind == TW__KEY_DURATION ? "ns" : "");
    if (parse1(&o, k->name, v) != 0)
      fail_msg("%s=%s, its minimum, is refused", k->name, v);
    snprintf(v, sizeof v, "%llu%s", (unsigned long long)k->min - 1,
             k->kind == TW__KEY_DURATION ? "ns" : "");
    if (parse1(&o, k->name, v) != TW_EOPTION)
      fail_msg("%s=%s, below its minimum, is accepted", k->name, v);
    if (k->max >= tw__option_field_max(k))
      continue;
    snprintf(v, sizeof v, "%llu", (unsigned long long)k->max);
    if (parse1(&o, k->name, v) != 0)
      fail_msg("%s=%s, its maximum, is refused", k->name, v);
    snprintf(v, sizeof v, "%llu", (unsigned long long)k->max + 1);
    if (parse1(&o, k->name, v) != TW_EOPTION)
      fail_msg("%s=%s, above its maximum, is accepted", k->name, v);
  }
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_man_page),
    cmocka_unit_test(test_readme),
    cmocka_unit_test(test_header),
    cmocka_unit_test(test_defaults_parse_back),
    cmocka_unit_test(test_bounds_are_exact),
  };

  if (argc == 3 && strcmp(argv[1], "--print") == 0) {
    text t = { NULL, 0, 0 };
    if (strcmp(argv[2], "man") == 0)
      render_man(&t);
    else if (strcmp(argv[2], "readme") == 0)
      render_readme(&t);
    else if (strcmp(argv[2], "header") == 0)
      render_header(&t);
    else
      return 2;
    fputs(t.s, stdout);
    free(t.s);
    return 0;
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
