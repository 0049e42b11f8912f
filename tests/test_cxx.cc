// test_cxx.cc -- the C++ binding (include/tracewriter.hpp), end to end
//
// Every file the binding writes is read back with the strict checker
// (tests/jsoncheck.h) and compared field by field: names, categories,
// argument types and values, ids, scopes, times.  Built by make check with
// the configured C++ compiler, once more with -fno-exceptions, and with
// clang++ by tests/test_cxx_clang.sh; every build is -Werror.
//
// Environment: top_builddir (for tools/tracewriter, which repairs the
// files of killed children), TMPDIR, TW_TEST_SEED (replays the random kill
// points; the seed used is printed).  Exit status: 0 all passed, 1 a check
// failed.

#include "tracewriter.hpp"

#include "jsoncheck.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// ------------------------------------------------- compile-time contract

enum class Color : char { red = 'r', green = 'g' };
enum class Big : std::uint64_t { max = ~std::uint64_t(0) };
enum Plain { plain_three = 3 };

static_assert(!std::is_copy_constructible_v<tw::Writer>);
static_assert(!std::is_copy_assignable_v<tw::Writer>);
static_assert(std::is_nothrow_move_constructible_v<tw::Writer>);
static_assert(std::is_nothrow_move_assignable_v<tw::Writer>);
static_assert(std::is_nothrow_destructible_v<tw::Writer>);
static_assert(sizeof(tw::Writer) == sizeof(tw_writer *));
static_assert(std::is_trivially_copyable_v<tw::WriterRef>);
static_assert(std::is_convertible_v<tw::Writer &, tw::WriterRef>);
static_assert(std::is_convertible_v<const tw::Writer &, tw::WriterRef>);
// A temporary Writer would close its writer at the end of the expression.
static_assert(!std::is_convertible_v<tw::Writer &&, tw::WriterRef>);
static_assert(std::is_convertible_v<tw_writer *, tw::WriterRef>);
static_assert(!std::is_copy_constructible_v<tw::Span>);
static_assert(!std::is_move_constructible_v<tw::Span>);
static_assert(sizeof(tw::Error) == sizeof(int));
static_assert(!std::is_convertible_v<int, tw::Error>);
static_assert(std::is_convertible_v<tw::Status, tw::Error>);
// Characters are not numbers; pointers other than to char do not turn
// into bool; string_views are not NUL-terminated names.
static_assert(!std::is_constructible_v<tw::Arg, const char *, char>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, const char>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, wchar_t>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, char16_t>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, char32_t>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, const void *>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, int *>);
static_assert(!std::is_constructible_v<tw::Arg, const char *, std::string *>);
static_assert(std::is_constructible_v<tw::Arg, const char *, char *>);
static_assert(std::is_constructible_v<tw::Arg, std::string, int>);
static_assert(!std::is_constructible_v<tw::CStr, std::string_view>);
static_assert(noexcept(tw::Writer::open("x")));
static_assert(noexcept(std::declval<tw::Writer &>().instant("c", "n", {{"a", 1}})));
static_assert(noexcept(tw::Span(nullptr, "c", "n", {{"a", 1}})));

// ------------------------------------------------------------ allocations

// The binding allocates only with new (std::nothrow), so counting those
// proves which calls allocate.  The replacements forward to the ordinary
// operator new, so that every delete matches its new (ASan checks it).
static unsigned long nothrow_news;

void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
  nothrow_news++;
  return ::operator new(n);
}

void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
  nothrow_news++;
  return ::operator new[](n);
}

// ---------------------------------------------------------------- harness

namespace {

int failures;

bool check(bool ok, const char *what, int line)
{
  if (!ok) {
    std::fprintf(stderr, "test_cxx.cc:%d: check failed: %s\n", line, what);
    failures++;
  }
  return ok;
}

#define CHECK(cond) check((cond), #cond, __LINE__)

// A temporary file path, created empty, removed at the end of the scope.
class TmpPath {
public:
  explicit TmpPath(const char *suffix = ".json")
  {
    const char *dir = std::getenv("TMPDIR");
    if (!dir || !*dir)
      dir = "/tmp";
    std::snprintf(path_, sizeof path_, "%s/twcxx-XXXXXX%s", dir, suffix);
    int fd = mkstemps(path_, static_cast<int>(std::strlen(suffix)));
    if (fd < 0) {
      std::perror(path_);
      std::exit(99);
    }
    ::close(fd);
  }
  ~TmpPath() { ::unlink(path_); }
  TmpPath(const TmpPath &) = delete;
  TmpPath &operator=(const TmpPath &) = delete;
  const char *c_str() const { return path_; }

private:
  char path_[512];
};

// One JSON value of a parsed trace.
struct Val {
  const jc_doc *d;
  jc_val v;

  Val at(const char *key) const { return Val{d, jc_get(d, v, key)}; }
  bool present() const { return v >= 0; }
  enum jc_type type() const { return jc_type(d, v); }
};

// A trace file, parsed strictly; ok() is false (and the reason printed)
// if it is not strict JSON.
class Trace {
public:
  explicit Trace(const char *path) : d_(nullptr), events_()
  {
    char err[256];
    d_ = jc_parse_file(path, err, sizeof err);
    if (!d_) {
      std::fprintf(stderr, "%s: not strict JSON: %s\n", path, err);
      return;
    }
    // Every record but the clock record the library writes after the
    // first one of each document ('c' "clock_sync"): the tests compare
    // the records the writer was given.
    jc_val a = jc_trace_events(d_);
    for (jc_val v = jc_first(d_, a); v >= 0; v = jc_next(d_, v))
      if (!jc_streq(d_, jc_get(d_, v, "ph"), "c") ||
          !jc_streq(d_, jc_get(d_, v, "name"), "clock_sync"))
        events_.push_back(v);
  }
  ~Trace() { jc_free(d_); }
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  bool ok() const { return d_ != nullptr; }
  std::size_t size() const { return events_.size(); }
  Val operator[](std::size_t i) const
  {
    return Val{d_, i < events_.size() ? events_[i] : -1};
  }
  Val root() const { return Val{d_, jc_root(d_)}; }
  // The first event with this name, or a missing value.
  Val named(const char *name) const
  {
    for (jc_val v : events_)
      if (jc_streq(d_, jc_get(d_, v, "name"), name))
        return Val{d_, v};
    return Val{d_, -1};
  }
  std::size_t count_named(const char *name) const
  {
    std::size_t n = 0;
    for (jc_val v : events_)
      n += jc_streq(d_, jc_get(d_, v, "name"), name) ? 1u : 0u;
    return n;
  }

private:
  jc_doc *d_;
  std::vector<jc_val> events_;
};

// Each comparison prints what it got when it fails; CHECK adds the line.

bool is_str(Val x, std::string_view want)
{
  std::size_t n;
  const char *s = jc_str(x.d, x.v, &n);
  if (s && std::string_view(s, n) == want)
    return true;
  std::fprintf(stderr, "  got %s, expected \"%.*s\"\n",
               s ? s : "(not a string)", static_cast<int>(want.size()),
               want.data());
  return false;
}

// An integer, read as int64_t or (unsigned, no minus sign) as uint64_t.
template <class T>
bool is_integer(Val x, T want)
{
  T got;
  int rc;
  if constexpr (std::is_signed_v<T>)
    rc = jc_int64(x.d, x.v, &got);
  else
    rc = jc_uint64(x.d, x.v, &got);
  if (x.type() == JC_NUMBER && rc == 0 && got == want)
    return true;
  std::size_t n;
  const char *raw = jc_raw(x.d, x.v, &n);
  std::fprintf(stderr, "  got %.*s, expected %s\n", static_cast<int>(n),
               raw ? raw : "(missing)", std::to_string(want).c_str());
  return false;
}

bool is_int(Val x, std::int64_t want) { return is_integer(x, want); }
bool is_uint(Val x, std::uint64_t want) { return is_integer(x, want); }

bool is_num(Val x, double want)
{
  if (x.v >= 0 && x.type() == JC_NUMBER && jc_num(x.d, x.v) == want)
    return true;
  std::size_t n;
  const char *raw = jc_raw(x.d, x.v, &n);
  std::fprintf(stderr, "  got %.*s, expected %g\n", static_cast<int>(n),
               raw ? raw : "(missing)", want);
  return false;
}

bool is_type(Val x, enum jc_type want)
{
  if (x.v >= 0 && x.type() == want)
    return true;
  std::fprintf(stderr, "  got type %d (value %d), expected type %d\n",
               x.v >= 0 ? static_cast<int>(x.type()) : -1, x.v,
               static_cast<int>(want));
  return false;
}

// A timestamp in microseconds with 3 decimals, as exact nanoseconds.
bool is_us(Val x, std::uint64_t want_ns)
{
  std::uint64_t got;
  if (jc_us_to_ns(x.d, x.v, &got) == 0 && got == want_ns)
    return true;
  std::fprintf(stderr, "  bad timestamp, expected %llu ns\n",
               static_cast<unsigned long long>(want_ns));
  return false;
}

std::uint64_t ns_of(Val x)
{
  std::uint64_t got = 0;
  return jc_us_to_ns(x.d, x.v, &got) == 0 ? got : ~std::uint64_t(0);
}

// The object's keys, in order, are exactly these.
bool has_keys(Val obj, std::initializer_list<const char *> keys)
{
  jc_val m = jc_first(obj.d, obj.v);
  bool ok = obj.type() == JC_OBJECT && obj.v >= 0;
  for (const char *k : keys) {
    std::size_t n;
    const char *raw = m >= 0 ? jc_key_raw(obj.d, m, &n) : nullptr;
    if (!raw || std::string_view(raw, n) != k) {
      std::fprintf(stderr, "  key \"%s\" expected, got \"%.*s\"\n", k,
                   raw ? static_cast<int>(n) : 0, raw ? raw : "");
      ok = false;
      break;
    }
    m = jc_next(obj.d, m);
  }
  if (ok && m >= 0) {
    std::size_t n;
    const char *raw = jc_key_raw(obj.d, m, &n);
    std::fprintf(stderr, "  unexpected key \"%.*s\"\n", static_cast<int>(n),
                 raw);
    ok = false;
  }
  return ok;
}

std::int64_t my_tid() { return static_cast<std::int64_t>(syscall(SYS_gettid)); }

// The fields every event of this thread has: ph, name, cat (NULL: none),
// the pid and tid of the caller.
bool is_event(Val e, const char *ph, const char *cat, const char *name)
{
  bool ok = e.present() && is_str(e.at("ph"), ph) && is_str(e.at("name"), name);
  ok = ok && (cat ? is_str(e.at("cat"), cat) : !e.at("cat").present());
  ok = ok && is_int(e.at("pid"), getpid()) && is_int(e.at("tid"), my_tid());
  if (!ok)
    std::fprintf(stderr, "  in event %s/%s\n", cat ? cat : "-", name);
  return ok;
}

// -------------------------------------------------------------- the tests

// Every phase the binding offers, read back field by field in order.
void test_every_phase_read_back()
{
  TmpPath path;
  tw::Status st;
  tw::Writer w = tw::Writer::open(path.c_str(), "buffer=1KiB", &st);
  if (!CHECK(w && st.ok()))
    return;
  std::uint64_t t0 = tw::now_ns();
  tw_stats s0 = w.stats();

  CHECK(w.process_name("cxx \"proc\"").ok());
  CHECK(w.thread_name(std::string("main thread")).ok());
  CHECK(w.process_sort_index(-3).ok());
  CHECK(w.thread_sort_index(7).ok());
  CHECK(w.process_labels("a,b").ok());

  char scratch[] = "scratch-value";
  std::uint64_t span_t0 = tw::now_ns();
  {
    std::string tmp = "temporary";
    tw::Span span(w, std::string("span") + "cat", std::string("span-name"),
                  {{"i64", std::numeric_limits<std::int64_t>::min()},
                   {"u64", std::numeric_limits<std::uint64_t>::max()},
                   {"int", -42},
                   {"short", static_cast<short>(-7)},
                   {"u8", static_cast<std::uint8_t>(200)},
                   {"i8", static_cast<std::int8_t>(-100)},
                   {"ul", 123UL},
                   {"f", 0.25f},
                   {"d", 1.5},
                   {"t", true},
                   {"no", false},
                   {"cs", "literal"},
                   {"str", tmp},
                   {"view", std::string_view(scratch, 7)},
                   {"emb", std::string_view("a\0b", 3)},
                   {"nul", nullptr},
                   {"json", tw::json("{\"k\":[1,2,{}]}")},
                   {"color", Color::green},
                   {"big", Big::max},
                   {"plain", plain_three},
                   {std::string("dyn") + "name", std::to_string(17)}});
    CHECK(span.active());
    CHECK(span.start_ns() >= span_t0);
    // The span copied everything: what it was given may change now.
    std::memset(scratch, 'X', sizeof scratch - 1);
    tmp.assign("overwritten, and longer than before");
  }
  std::uint64_t span_t1 = tw::now_ns();

  CHECK(w.instant("cat", "inst").ok());
  CHECK(w.instant("cat", "glob", tw::Scope::global, {{"k", 1}}).ok());
  CHECK(w.instant("cat", "proc", tw::Scope::process).ok());
  CHECK(w.counter("cat", "queue", {{"depth", 3}, {"bytes", 4096u},
                                   {"load", 0.75}}).ok());
  CHECK(w.async_begin("req", "request", 0xabcdef, {{"path", "/v1/chat"}}).ok());
  CHECK(w.async_instant("req", "first_token", 0xabcdef).ok());
  CHECK(w.async_end("req", "request", 0xabcdef, {{"tokens", 128}}).ok());
  CHECK(w.flow_start("flow", "handoff", 42).ok());
  CHECK(w.flow_step("flow", "handoff", 42).ok());
  CHECK(w.flow_end("flow", "handoff", 42).ok());
  CHECK(w.complete("cat", "explicit", 5000000123u, 2500000u,
                   {{"k", "v"}}).ok());
  CHECK(w.begin("cat", "b", {{"x", 1}}).ok());
  CHECK(w.end("cat", "b").ok());
  CHECK(w.mark("cat", "mark").ok());

  tw_event obj{};
  obj.ph = 'N';
  obj.cat = "obj";
  obj.name = "model";
  obj.has = TW_HAS_ID | TW_HAS_TS;
  obj.id = 9;
  obj.ts = 7000;
  obj.id_scope = "weights";
  CHECK(w.emit(obj).ok());
  tw_event snap = obj;
  snap.ph = 'O';
  snap.id_scope = nullptr;
  snap.flags = TW_EV_ID2_LOCAL;
  CHECK(w.emit(snap, {{"snapshot", tw::json("{\"layers\":32}")}}).ok());
  tw_event bad{};                        // no phase, no name
  CHECK(w.emit(bad) == TW_EEVENT);

  CHECK(w.stats().events - s0.events == 22);
  CHECK(w.stats().rejected - s0.rejected == 1);
  CHECK(w.errcode().ok());
  std::uint64_t t1 = tw::now_ns();
  if (!CHECK(w.close().ok()))
    return;
  CHECK(!w);

  Trace t(path.c_str());
  if (!CHECK(t.ok()) || !CHECK(t.size() == 23))
    return;
  std::size_t i = 0;
  CHECK(is_event(t[i], "M", nullptr, "process_name"));   // from the open
  i++;

  Val e = t[i++];
  CHECK(is_event(e, "M", nullptr, "process_name"));
  CHECK(is_str(e.at("args").at("name"), "cxx \"proc\""));
  e = t[i++];
  CHECK(is_event(e, "M", nullptr, "thread_name"));
  CHECK(is_str(e.at("args").at("name"), "main thread"));
  e = t[i++];
  CHECK(is_event(e, "M", nullptr, "process_sort_index"));
  CHECK(is_int(e.at("args").at("sort_index"), -3));
  e = t[i++];
  CHECK(is_event(e, "M", nullptr, "thread_sort_index"));
  CHECK(is_int(e.at("args").at("sort_index"), 7));
  e = t[i++];
  CHECK(is_event(e, "M", nullptr, "process_labels"));
  CHECK(is_str(e.at("args").at("labels"), "a,b"));

  e = t[i++];
  CHECK(is_event(e, "X", "spancat", "span-name"));
  std::uint64_t ts = ns_of(e.at("ts")), dur = ns_of(e.at("dur"));
  CHECK(ts >= span_t0 && ts <= span_t1);
  CHECK(dur <= span_t1 - ts);
  Val a = e.at("args");
  CHECK(has_keys(a, {"i64", "u64", "int", "short", "u8", "i8", "ul", "f",
                     "d", "t", "no", "cs", "str", "view", "emb", "nul",
                     "json", "color", "big", "plain", "dynname"}));
  CHECK(is_int(a.at("i64"), std::numeric_limits<std::int64_t>::min()));
  // Above INT64_MAX, a uint64 is written as the nearest double.
  CHECK(is_num(a.at("u64"), 18446744073709551616.0));
  CHECK(is_int(a.at("int"), -42));
  CHECK(is_int(a.at("short"), -7));
  CHECK(is_uint(a.at("u8"), 200));
  CHECK(is_int(a.at("i8"), -100));
  CHECK(is_uint(a.at("ul"), 123));
  CHECK(is_num(a.at("f"), 0.25));
  CHECK(is_num(a.at("d"), 1.5));
  CHECK(is_type(a.at("t"), JC_TRUE));
  CHECK(is_type(a.at("no"), JC_FALSE));
  CHECK(is_str(a.at("cs"), "literal"));
  CHECK(is_str(a.at("str"), "temporary"));
  CHECK(is_str(a.at("view"), "scratch"));
  CHECK(is_str(a.at("emb"), std::string_view("a\0b", 3)));
  CHECK(is_type(a.at("nul"), JC_NULL));
  Val j = a.at("json");
  CHECK(is_type(j, JC_OBJECT) && has_keys(j, {"k"}));
  CHECK(jc_len(j.d, j.at("k").v) == 3);
  CHECK(is_int(Val{j.d, jc_index(j.d, j.at("k").v, 1)}, 2));
  CHECK(is_int(a.at("color"), 'g'));
  CHECK(is_num(a.at("big"), 18446744073709551616.0));
  CHECK(is_int(a.at("plain"), 3));
  CHECK(is_str(a.at("dynname"), "17"));

  e = t[i++];
  CHECK(is_event(e, "I", "cat", "inst"));
  CHECK(is_str(e.at("s"), "t"));
  CHECK(!e.at("args").present());
  e = t[i++];
  CHECK(is_event(e, "I", "cat", "glob"));
  CHECK(is_str(e.at("s"), "g"));
  CHECK(has_keys(e.at("args"), {"k"}) && is_int(e.at("args").at("k"), 1));
  e = t[i++];
  CHECK(is_event(e, "I", "cat", "proc"));
  CHECK(is_str(e.at("s"), "p"));
  e = t[i++];
  CHECK(is_event(e, "C", "cat", "queue"));
  CHECK(has_keys(e.at("args"), {"depth", "bytes", "load"}));
  CHECK(is_int(e.at("args").at("depth"), 3));
  CHECK(is_uint(e.at("args").at("bytes"), 4096));
  CHECK(is_num(e.at("args").at("load"), 0.75));

  e = t[i++];
  CHECK(is_event(e, "b", "req", "request"));
  CHECK(is_str(e.at("id"), "0xabcdef"));
  CHECK(is_str(e.at("args").at("path"), "/v1/chat"));
  e = t[i++];
  CHECK(is_event(e, "n", "req", "first_token"));
  CHECK(is_str(e.at("id"), "0xabcdef"));
  CHECK(!e.at("args").present());
  e = t[i++];
  CHECK(is_event(e, "e", "req", "request"));
  CHECK(is_str(e.at("id"), "0xabcdef"));
  CHECK(is_int(e.at("args").at("tokens"), 128));

  const char *flows[] = {"s", "t", "f"};
  for (const char *ph : flows) {
    e = t[i++];
    CHECK(is_event(e, ph, "flow", "handoff"));
    CHECK(is_str(e.at("id"), "0x2a"));
    if (ph[0] == 'f')
      CHECK(is_str(e.at("bp"), "e"));
    else
      CHECK(!e.at("bp").present());
  }

  e = t[i++];
  CHECK(is_event(e, "X", "cat", "explicit"));
  CHECK(is_us(e.at("ts"), 5000000123u));
  CHECK(is_us(e.at("dur"), 2500000u));
  CHECK(is_str(e.at("args").at("k"), "v"));
  e = t[i++];
  CHECK(is_event(e, "B", "cat", "b"));
  CHECK(is_int(e.at("args").at("x"), 1));
  e = t[i++];
  CHECK(is_event(e, "E", "cat", "b"));
  e = t[i++];
  CHECK(is_event(e, "I", "cat", "mark"));   // a global instant
  CHECK(is_str(e.at("s"), "g"));

  e = t[i++];
  CHECK(is_event(e, "N", "obj", "model"));
  CHECK(is_str(e.at("id"), "0x9"));
  CHECK(is_str(e.at("scope"), "weights"));
  CHECK(is_us(e.at("ts"), 7000));
  e = t[i++];
  CHECK(is_event(e, "O", "obj", "model"));
  CHECK(!e.at("id").present());
  CHECK(is_str(e.at("id2").at("local"), "0x9"));
  CHECK(!e.at("scope").present());
  CHECK(is_int(e.at("args").at("snapshot").at("layers"), 32));
  CHECK(i == t.size());

  // Every event written "now" (all but the explicit times; metadata has
  // no ts) has a timestamp between t0 and t1.
  std::size_t timed = 0;
  for (std::size_t k = 1; k < t.size(); k++) {
    Val x = t[k];
    if (!x.at("ts").present() || jc_streq(x.d, x.at("name").v, "explicit") ||
        jc_streq(x.d, x.at("name").v, "model"))
      continue;
    CHECK(ns_of(x.at("ts")) >= t0 && ns_of(x.at("ts")) <= t1);
    timed++;
  }
  CHECK(timed == 14);
}

// The type each C++ value is written as, without writing.
void test_arg_types()
{
  auto type = [](const tw::Arg &a) { return a.c_arg().type; };
  CHECK(type({"b", true}) == TW_ARG_BOOL);
  CHECK(type({"i8", static_cast<signed char>(-1)}) == TW_ARG_INT);
  CHECK(type({"u8", static_cast<unsigned char>(1)}) == TW_ARG_UINT);
  CHECK(type({"s", static_cast<short>(1)}) == TW_ARG_INT);
  CHECK(type({"us", static_cast<unsigned short>(1)}) == TW_ARG_UINT);
  CHECK(type({"i", 1}) == TW_ARG_INT);
  CHECK(type({"u", 1u}) == TW_ARG_UINT);
  CHECK(type({"l", 1L}) == TW_ARG_INT);
  CHECK(type({"ul", 1UL}) == TW_ARG_UINT);
  CHECK(type({"ll", 1LL}) == TW_ARG_INT);
  CHECK(type({"ull", 1ULL}) == TW_ARG_UINT);
  CHECK(type({"size", sizeof(int)}) == TW_ARG_UINT);
  CHECK(type({"f", 1.0f}) == TW_ARG_DOUBLE);
  CHECK(type({"d", 1.0}) == TW_ARG_DOUBLE);
  CHECK(type({"ld", 1.0L}) == TW_ARG_DOUBLE);
  CHECK(type({"e", Color::red}) == TW_ARG_INT);
  CHECK(type({"e", Big::max}) == TW_ARG_UINT);
  CHECK(type({"e", plain_three}) != TW_ARG_BOOL);
  CHECK(type({"byte", std::byte{7}}) == TW_ARG_UINT);
  CHECK(type({"z", nullptr}) == TW_ARG_NULL);
  CHECK(type({"j", tw::json("1")}) == TW_ARG_JSON);
  char buf[] = "mutable";
  CHECK(type({"p", buf}) == TW_ARG_STRING);
  const char *none = nullptr;
  tw::Arg n("null string", none);
  CHECK(n.c_arg().type == TW_ARG_STRING && n.c_arg().v.s == nullptr);
  tw::Arg v("empty view", std::string_view());
  CHECK(v.c_arg().v.s != nullptr && v.c_arg().len == 0);
  tw::Arg s("len", std::string("abc"));
  CHECK(s.c_arg().len == 3);
  tw::Arg c("cs", "abc");
  CHECK(c.c_arg().len == tw::nul_terminated);
  tw::Arg e("e", Color::red);
  CHECK(e.c_arg().v.i == 'r');
  tw::Arg u("u", static_cast<unsigned char>(255));
  CHECK(u.c_arg().v.u == 255);
  tw::Arg f("f", 0.1f);
  CHECK(f.c_arg().v.d == static_cast<double>(0.1f));
}

// A null writer: every call succeeds and does nothing.
void test_null_writer_is_noop()
{
  tw::Writer w;
  CHECK(!w && w.get() == nullptr);
  tw::WriterRef r(nullptr);
  CHECK(!r);
  tw_event bad{};                        // invalid, but never looked at
  unsigned long before = nothrow_news;
  for (tw::WriterRef x : {w.ref(), r, tw::WriterRef()}) {
    CHECK(x.instant("c", "n", {{"a", 1}}).ok());
    CHECK(x.instant("c", "n", tw::Scope::global).ok());
    CHECK(x.counter("c", "n", {{"a", 1}}).ok());
    CHECK(x.complete("c", "n", 1, 2, {{"a", "b"}}).ok());
    CHECK(x.begin("c", "n").ok() && x.end("c", "n").ok());
    CHECK(x.async_begin("c", "n", 1).ok() && x.async_instant("c", "n", 1).ok()
          && x.async_end("c", "n", 1).ok());
    CHECK(x.flow_start("c", "n", 1).ok() && x.flow_step("c", "n", 1).ok() &&
          x.flow_end("c", "n", 1).ok());
    CHECK(x.process_name("p").ok() && x.thread_name("t").ok() &&
          x.process_sort_index(1).ok() && x.thread_sort_index(1).ok() &&
          x.process_labels("l").ok() && x.mark("c", "n").ok());
    CHECK(x.emit(bad).ok() && x.emit(bad, {{"a", 1}}).ok());
    // Arguments beyond the stack array are not even copied.
    CHECK(x.instant("c", "n", {{"1", 1}, {"2", 2}, {"3", 3}, {"4", 4},
                               {"5", 5}, {"6", 6}, {"7", 7}, {"8", 8},
                               {"9", 9}, {"10", 10}, {"11", 11}, {"12", 12},
                               {"13", 13}, {"14", 14}, {"15", 15},
                               {"16", 16}, {"17", 17}}).ok());
    CHECK(x.flush().ok() && x.errcode().ok());
    tw_stats s = x.stats();
    CHECK(s.events == 0 && s.bytes == 0 && s.commits == 0 && s.error == 0);
    tw::Span span(x, "c", "n", {{"a", std::string(300, 'x')}});
    CHECK(!span.active() && !span && span.start_ns() == 0);
    CHECK(span.end().ok());
  }
  CHECK(nothrow_news == before);
  CHECK(w.close().ok());
  tw_writer *raw = w.release();
  CHECK(raw == nullptr);
}

// Moves transfer the writer; a moved-from Writer is null and closes
// nothing; move assignment closes the writer it replaces.
void test_move_semantics()
{
  TmpPath a, b;
  tw::Writer w2;
  {
    tw::Writer w1 = tw::Writer::open(a.c_str());
    CHECK(static_cast<bool>(w1));
    CHECK(w1.instant("m", "before_move").ok());
    tw_writer *raw = w1.get();
    w2 = std::move(w1);
    CHECK(!w1 && w1.get() == nullptr);
    CHECK(w2.get() == raw);
    CHECK(w1.instant("m", "lost").ok());               // a no-op
    CHECK(w1.close().ok());                            // closes nothing
    tw::Writer w3(std::move(w2));
    CHECK(!w2 && w3.get() == raw);
    w2 = std::move(w3);
  }                                 // w1 and w3 destroyed: nothing closed
  CHECK(w2.instant("m", "after_move").ok());

  tw::Writer other = tw::Writer::open(b.c_str());
  CHECK(other.instant("m", "b1").ok());
  other = std::move(w2);            // closes b's writer, takes a's
  CHECK(!w2);
  {
    Trace tb(b.c_str());            // b is complete: closed by the move
    CHECK(tb.ok() && tb.size() == 2);
    CHECK(is_event(tb[1], "I", "m", "b1"));
  }
  tw::Writer &alias = other;
  other = std::move(alias);         // self-move keeps the writer
  CHECK(static_cast<bool>(other));
  CHECK(other.instant("m", "via_other").ok());

  tw_writer *raw = other.release();
  CHECK(!other && raw != nullptr);
  CHECK(tw_instant(raw, "m", "raw", 't', nullptr, 0) == 0);
  tw::Writer adopted(raw);
  CHECK(adopted.get() == raw);
  CHECK(adopted.close().ok());
  CHECK(!adopted);

  Trace ta(a.c_str());
  CHECK(ta.ok() && ta.size() == 5);
  const char *want[] = {"before_move", "after_move", "via_other", "raw"};
  for (std::size_t k = 0; k < 4; k++)
    CHECK(is_event(ta[k + 1], "I", "m", want[k]));
  CHECK(ta.count_named("lost") == 0);
}

// The destructor commits and closes: events buffered until then are in
// the file after the scope.
void test_destructor_closes()
{
  TmpPath path;
  {
    tw::Writer w = tw::Writer::open(path.c_str(), "buffer=64KiB");
    for (int i = 0; i < 10; i++)
      CHECK(w.instant("d", "ev", {{"i", i}}).ok());
    Trace before(path.c_str());     // only the open's commit so far
    CHECK(before.ok() && before.size() == 1);
  }
  Trace t(path.c_str());
  if (!CHECK(t.ok() && t.size() == 11))
    return;
  for (int i = 0; i < 10; i++) {
    Val e = t[static_cast<std::size_t>(i) + 1];
    CHECK(is_event(e, "I", "d", "ev") && is_int(e.at("args").at("i"), i));
  }
}

// Bad options: a null writer, TW_EOPTION and the parser's message; the
// file is not touched.
void test_bad_options()
{
  TmpPath path;
  int fd = ::open(path.c_str(), O_WRONLY);
  CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
  ::close(fd);

  tw::Status st;
  tw::Writer w = tw::Writer::open(path.c_str(), "flush=100ms,bogus=1", &st);
  CHECK(!w);
  CHECK(st.code() == TW_EOPTION && st.error() == TW_EOPTION && !st.ok());
  CHECK(static_cast<bool>(st));
  CHECK(std::strstr(st.message(), "bogus") != nullptr);
  CHECK(std::strcmp(st.name(), "TW_EOPTION") == 0);
  tw::Error as_error = st;
  CHECK(as_error == TW_EOPTION);

  w = tw::Writer::open(path.c_str(), std::string("gzip=12"), &st);
  CHECK(!w && st.code() == TW_EOPTION);
  CHECK(std::strstr(st.message(), "gzip") != nullptr);
  CHECK(!tw::Writer::open(path.c_str(), "buffer=1"));    // no status: fine
  w = tw::Writer::open_fd(1, "nonsense", &st);
  CHECK(!w && st.code() == TW_EOPTION);
  CHECK(std::strstr(st.message(), "nonsense") != nullptr);
  w = tw::Writer::open_stream(stdout, "sink=bogus", &st);
  CHECK(!w && st.code() == TW_EOPTION);
  CHECK(std::strstr(st.message(), "bogus") != nullptr);

  FILE *f = std::fopen(path.c_str(), "r");
  char buf[8] = "";
  CHECK(f && std::fread(buf, 1, sizeof buf, f) == 4);
  CHECK(std::memcmp(buf, "keep", 4) == 0);
  if (f)
    std::fclose(f);

  // The parser through tw::Options: on error the options are unchanged.
  tw::Options o;
  CHECK(o.struct_size == sizeof(tw_options));
  CHECK(o.parse("gzip=12", &st) == TW_EOPTION);
  CHECK(st.code() == TW_EOPTION && std::strstr(st.message(), "gzip"));
  CHECK(o.gzip_level == TW_DEFAULT_GZIP_LEVEL);
  CHECK(o.parse("mmap,flush=100ms", &st).ok() && st.ok());
  CHECK(std::strcmp(st.message(), tw_strerror(0)) == 0);
  CHECK(o.sink == TW_SINK_MMAP && o.flush_interval_ns == 100000000u);
  CHECK(o.parse(nullptr).ok() && o.parse("").ok());

  // A system error: tw_strerror's message.
  w = tw::Writer::open("/nonexistent-dir-of-tracewriter/x.json", &st);
  CHECK(!w && st.code() == -ENOENT);
  CHECK(std::strcmp(st.message(), tw_strerror(-ENOENT)) == 0);
  CHECK(std::strcmp(st.name(), "ENOENT") == 0);

  // A success after a failure resets the status.
  w = tw::Writer::open(path.c_str(), "", &st);
  CHECK(w && st.ok() && st.code() == 0);
  CHECK(w.close().ok());

  tw::Error none;
  CHECK(none.ok() && !none && none == 0 && none == tw::Error(0));
  tw::Error utf8(TW_EUTF8);
  CHECK(!utf8.ok() && utf8 && utf8 == TW_EUTF8 && TW_EUTF8 == utf8);
  CHECK(utf8 != TW_EJSON && utf8 != none && utf8.code() == TW_EUTF8);
  CHECK(std::strcmp(utf8.message(), tw_strerror(TW_EUTF8)) == 0);
  CHECK(std::strcmp(utf8.name(), "TW_EUTF8") == 0);
}

// Bad input is refused by option, or replaced by default; the file stays
// valid either way.
void test_bad_input()
{
  const std::string bad_utf8 = "a\xff" "b";
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  {
    TmpPath path;
    tw::Writer w = tw::Writer::open(path.c_str(),
                                    "utf8=reject,nonfinite=reject");
    CHECK(w.instant("e", "bad", {{"s", bad_utf8}}) == TW_EUTF8);
    CHECK(w.instant("e", "nan", {{"d", nan}}) == TW_ENONFINITE);
    CHECK(w.counter("e", "inf", {{"d", inf}}) == TW_ENONFINITE);
    CHECK(w.instant("e", "json", {{"j", tw::json("{bad")}}) == TW_EJSON);
    CHECK(w.instant("e", "noname", {{nullptr, 1}}) == TW_EEVENT);
    {
      tw::Span s(w, "e", "span", {{"s", std::string("\xc3\x28")}});
      CHECK(s.end() == TW_EUTF8);
      CHECK(s.end().ok());          // ended: later calls do nothing
    }
    CHECK(w.instant("e", "good").ok());
    CHECK(w.stats().rejected == 6);
    CHECK(w.errcode().ok());        // bad input is never sticky
    CHECK(w.close().ok());
    Trace t(path.c_str());
    CHECK(t.ok() && t.size() == 2);
    CHECK(is_event(t[1], "I", "e", "good"));
  }
  {
    TmpPath path;
    tw::Writer w = tw::Writer::open(path.c_str());
    CHECK(w.instant("e", "bad", {{"s", bad_utf8}}).ok());
    CHECK(w.instant("e", "nan", {{"d", nan}, {"i", -inf}}).ok());
    CHECK(w.close().ok());
    Trace t(path.c_str());
    CHECK(t.ok() && t.size() == 3);
    CHECK(is_str(t.named("bad").at("args").at("s"), "a\xef\xbf\xbd" "b"));
    CHECK(is_type(t.named("nan").at("args").at("d"), JC_NULL));
    CHECK(is_type(t.named("nan").at("args").at("i"), JC_NULL));
    CHECK(w.stats().events == 0);   // closed: a null writer again
  }
}

// tw::Options, open_fd and open_stream.
void test_open_fd_stream_options()
{
  TmpPath p1, p2, p3;
  int fd = ::open(p1.c_str(), O_RDWR | O_TRUNC);
  CHECK(fd >= 0);
  tw::Writer w = tw::Writer::open_fd(fd, "buffer=1KiB");
  CHECK(static_cast<bool>(w));
  for (int i = 0; i < 100; i++)
    CHECK(w.complete("fd", "x", 1000u + static_cast<unsigned>(i), 5,
                     {{"i", i}}).ok());
  CHECK(w.close().ok());
  CHECK(::close(fd) == 0);          // still ours: the writer left it open
  Trace t1(p1.c_str());
  CHECK(t1.ok() && t1.size() == 101);
  CHECK(is_int(t1[100].at("args").at("i"), 99));
  CHECK(is_us(t1[100].at("ts"), 1099));

  std::FILE *f = std::fopen(p2.c_str(), "w");
  tw::Options o;
  o.process_name = "streamed";
  tw::Status st;
  w = tw::Writer::open_stream(f, o, &st);
  CHECK(w && st.ok());
  CHECK(w.instant("st", "one", {{"k", "v"}}).ok());
  CHECK(w.close().ok());
  CHECK(std::fclose(f) == 0);
  Trace t2(p2.c_str());
  CHECK(t2.ok() && t2.size() == 2);
  CHECK(is_str(t2[0].at("args").at("name"), "streamed"));
  CHECK(is_event(t2[1], "I", "st", "one"));

  tw::Options obj;
  obj.format = TW_FORMAT_OBJECT;
  w = tw::Writer::open(std::string(p3.c_str()), obj);
  CHECK(w.instant("o", "in_object").ok());
  CHECK(w.close().ok());
  Trace t3(p3.c_str());
  CHECK(t3.ok() && is_type(t3.root(), JC_OBJECT));
  CHECK(is_type(t3.root().at("traceEvents"), JC_ARRAY));
  CHECK(t3.size() == 2 && is_event(t3[1], "I", "o", "in_object"));
}

// Spans: end() early, nesting, large spans, allocation only when large.
void test_spans()
{
  TmpPath path;
  tw::Writer w = tw::Writer::open(path.c_str());
  std::uint64_t t0 = tw::now_ns();
  {
    tw::Span s(w, "s", "early");
    CHECK(s.active() && static_cast<bool>(s));
    CHECK(s.end().ok());
    CHECK(!s.active());
    CHECK(s.end().ok());
  }                                 // the destructor writes nothing more
  {
    tw::Span outer(w.get(), "s", "outer");
    tw::Span inner(w.ref(), "s", "inner", {{"depth", 2}});
  }
  std::uint64_t t1 = tw::now_ns();

  // Up to inline_args arguments and inline_text bytes: no allocation.
  unsigned long before = nothrow_news;
  std::string name(100, 'n');
  // cat "s" and the name with their NULs, 8 one-letter names, a value:
  std::string fits(256 - 2 - 101 - 8 * 2, 'v');        // exactly 256 bytes
  {
    tw::Span s(w, "s", name, {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4},
                              {"e", 5}, {"f", 6}, {"g", 7}, {"h", fits}});
  }
  CHECK(nothrow_news == before);
  CHECK(w.instant("s", "sixteen", {{"1", 1}, {"2", 2}, {"3", 3}, {"4", 4},
                                   {"5", 5}, {"6", 6}, {"7", 7}, {"8", 8},
                                   {"9", 9}, {"10", 10}, {"11", 11},
                                   {"12", 12}, {"13", 13}, {"14", 14},
                                   {"15", 15}, {"16", 16}}).ok());
  CHECK(nothrow_news == before);

  // One more byte, one more argument: one block each.
  std::string over(fits.size() + 1, 'o');
  {
    std::string cat = "c";
    tw::Span s(w, cat, name, {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4},
                              {"e", 5}, {"f", 6}, {"g", 7}, {"h", over}});
    cat.assign("changed");
    over.assign("changed");
  }
  CHECK(nothrow_news == before + 1);
  {
    tw::Span s(w, "s", "nine", {{"1", 1}, {"2", 2}, {"3", 3}, {"4", 4},
                                {"5", 5}, {"6", 6}, {"7", 7}, {"8", 8},
                                {"9", "nine"}});
  }
  CHECK(nothrow_news == before + 2);
  CHECK(w.instant("s", "seventeen", {{"1", 1}, {"2", 2}, {"3", 3}, {"4", 4},
                                     {"5", 5}, {"6", 6}, {"7", 7}, {"8", 8},
                                     {"9", 9}, {"10", 10}, {"11", 11},
                                     {"12", 12}, {"13", 13}, {"14", 14},
                                     {"15", 15}, {"16", 16},
                                     {"17", 17}}).ok());
  CHECK(nothrow_news == before + 3);
  CHECK(w.close().ok());

  Trace t(path.c_str());
  if (!CHECK(t.ok() && t.size() == 9))
    return;
  CHECK(t.count_named("early") == 1);
  Val early = t.named("early");
  CHECK(is_event(early, "X", "s", "early"));
  CHECK(ns_of(early.at("ts")) >= t0);
  Val inner = t[2], outer = t[3];   // the inner span ends first
  CHECK(is_event(inner, "X", "s", "inner") && is_event(outer, "X", "s", "outer"));
  CHECK(is_int(inner.at("args").at("depth"), 2));
  std::uint64_t its = ns_of(inner.at("ts")), ots = ns_of(outer.at("ts"));
  CHECK(ots <= its);
  CHECK(ots + ns_of(outer.at("dur")) >= its + ns_of(inner.at("dur")));
  CHECK(ots + ns_of(outer.at("dur")) <= t1);

  Val e = t[4];
  CHECK(is_event(e, "X", "s", name.c_str()));
  CHECK(is_str(e.at("args").at("h"), fits));
  CHECK(jc_len(e.d, e.at("args").v) == 8);
  e = t[6];
  CHECK(is_event(e, "X", "c", name.c_str()));
  CHECK(is_str(e.at("args").at("h"), std::string(fits.size() + 1, 'o')));
  e = t[7];
  CHECK(is_event(e, "X", "s", "nine"));
  CHECK(has_keys(e.at("args"), {"1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  CHECK(is_str(e.at("args").at("9"), "nine"));
  CHECK(jc_len(t.root().d, t[8].at("args").v) == 17);
  CHECK(is_int(t[8].at("args").at("17"), 17));
}

// Runs f in a child process; returns its exit status (or -1).
template <class F>
int in_child(F f)
{
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0)
    _exit(f());
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

// tw::global(): off without TRACEWRITER_OUT, an error with a bad
// TRACEWRITER_OPTIONS, a writer that is never closed otherwise.  The first
// two run in children, since tw_global reads the environment once.
void test_global()
{
  CHECK(in_child([] {
    unsetenv("TRACEWRITER_OUT");
    tw::WriterRef g = tw::global();
    if (g || !g.instant("g", "n").ok())
      return 1;
    { tw::Span s(tw::global(), "g", "n"); }
    return tw::global_status().ok() ? 0 : 2;
  }) == 0);

  TmpPath path;
  CHECK(in_child([&path] {
    setenv("TRACEWRITER_OUT", path.c_str(), 1);
    setenv("TRACEWRITER_OPTIONS", "bogus_key=1", 1);
    if (tw::global())
      return 1;
    tw::Status st = tw::global_status();
    return st.code() == TW_EOPTION && std::strstr(st.message(), "bogus_key")
           ? 0 : 2;
  }) == 0);

  setenv("TRACEWRITER_OUT", path.c_str(), 1);
  setenv("TRACEWRITER_OPTIONS", "buffer=4KiB", 1);
  tw::WriterRef g = tw::global();
  if (!CHECK(static_cast<bool>(g)))
    return;
  CHECK(g.get() == tw_global());
  CHECK(g.thread_name("global main").ok());
  {
    tw::Span s(tw::global(), "g", "global_span", {{"k", "v"}});
  }
  CHECK(g.flush().ok());
  Trace t(path.c_str());
  CHECK(t.ok() && t.size() == 3);
  CHECK(is_event(t.named("global_span"), "X", "g", "global_span"));
  CHECK(is_str(t.named("global_span").at("args").at("k"), "v"));
  CHECK(tw::global_status().ok());
  // Handles to the global writer close nothing: it still works.
  { tw::WriterRef copy = g; (void)copy; }
  CHECK(tw::global().instant("g", "still_open").ok() && g.flush().ok());
  Trace t2(path.c_str());
  CHECK(t2.ok() && t2.count_named("still_open") == 1);
}

// A child writing spans through the binding is SIGKILLed at a random
// moment: the file is strict JSON, or tracewriter repair makes it so, and
// it holds every span the child had committed, in order, intact.
// The file to read: path if it is strict JSON, else repaired, written by
// "tracewriter repair -o repaired path"; NULL if the repair failed.
const char *valid_or_repaired(const TmpPath &path, const TmpPath &repaired,
                              unsigned *repairs)
{
  jc_doc *valid = jc_parse_file(path.c_str(), nullptr, 0);
  jc_free(valid);
  if (valid)
    return path.c_str();
  const char *dir = std::getenv("top_builddir");
  std::string tool = std::string(dir && *dir ? dir : ".") + "/tools/tracewriter";
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execl(tool.c_str(), tool.c_str(), "repair", "-q", "-o", repaired.c_str(),
          path.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = -1;
  if (!CHECK(pid > 0 && waitpid(pid, &status, 0) == pid) ||
      !CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    return nullptr;
  (*repairs)++;
  return repaired.c_str();
}

// A child's spans: the process name, then at least min "work" spans,
// numbered from 0, each intact.
void check_work_spans(const char *file, std::size_t min)
{
  Trace t(file);
  if (!CHECK(t.ok()))
    return;
  CHECK(t.size() >= min + 1);
  CHECK(is_str(t[0].at("name"), "process_name"));
  for (std::size_t k = 1; k < t.size(); k++) {
    Val e = t[k];
    std::uint64_t i = k - 1;
    if (!CHECK(is_str(e.at("ph"), "X") && is_str(e.at("name"), "work") &&
               is_str(e.at("cat"), "kill") &&
               is_uint(e.at("args").at("i"), i) &&
               is_str(e.at("args").at("s"), std::to_string(i))))
      break;
  }
}

// Writes "work" spans for ever, reporting on fd each count committed by
// a flush.
[[noreturn]] void work_until_killed(const char *path, const char *options,
                                    int fd)
{
  tw::Writer w = tw::Writer::open(path, options);
  if (!w)
    _exit(3);
  for (std::uint32_t i = 0;; i++) {
    {
      tw::Span s(w, "kill", "work", {{"i", i}, {"s", std::to_string(i)}});
    }
    if (i % 50 == 49) {
      std::uint32_t committed = i + 1;
      if (!w.flush().ok() ||
          write(fd, &committed, sizeof committed) != sizeof committed)
        _exit(4);
    }
  }
}

// A child writing spans through the binding is SIGKILLed at a random
// moment: the file is strict JSON, or tracewriter repair makes it so, and
// it holds every span the child had committed, in order, intact.
void kill_once(const char *options, unsigned *seed, unsigned *repairs)
{
  TmpPath path, repaired;
  int fds[2];
  if (!CHECK(pipe(fds) == 0))
    return;
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    ::close(fds[0]);
    work_until_killed(path.c_str(), options, fds[1]);
  }
  ::close(fds[1]);
  if (!CHECK(pid > 0))
    return;
  std::uint32_t committed = 0, n;
  if (read(fds[0], &committed, sizeof committed) == sizeof committed) {
    struct timespec ts = {0, static_cast<long>(rand_r(seed) % 4000) * 1000};
    nanosleep(&ts, nullptr);
  }
  kill(pid, SIGKILL);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  while (read(fds[0], &n, sizeof n) == sizeof n)
    committed = n;
  ::close(fds[0]);
  CHECK(committed >= 50);
  if (const char *file = valid_or_repaired(path, repaired, repairs))
    check_work_spans(file, committed);
}

void test_sigkill_child()
{
  unsigned seed = static_cast<unsigned>(std::time(nullptr)), repairs = 0;
  if (const char *s = std::getenv("TW_TEST_SEED"))
    seed = static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  std::printf("  seed %u (TW_TEST_SEED=%u replays it)\n", seed, seed);
  const char *sinks[] = {"buffer=4KiB", "mmap,chunk=4KiB"};
  for (const char *options : sinks)
    for (int k = 0; k < 4; k++)
      kill_once(options, &seed, &repairs);
  std::printf("  8 children killed, %u files needed repair\n", repairs);

  // The repair path, every time: a trace cut inside a record, as a kill
  // inside a commit leaves it.
  TmpPath path, repaired;
  {
    tw::Writer w = tw::Writer::open(path.c_str());
    for (std::uint32_t i = 0; i < 100; i++)
      tw::Span s(w, "kill", "work", {{"i", i}, {"s", std::to_string(i)}});
  }
  struct stat st;
  CHECK(stat(path.c_str(), &st) == 0 && st.st_size > 1000);
  CHECK(truncate(path.c_str(), st.st_size / 2) == 0);
  repairs = 0;
  if (const char *file = valid_or_repaired(path, repaired, &repairs))
    check_work_spans(file, 10);
  CHECK(repairs == 1);
}

struct Test {
  const char *name;
  void (*run)();
};

const Test tests[] = {
  {"every_phase_read_back", test_every_phase_read_back},
  {"arg_types", test_arg_types},
  {"null_writer_is_noop", test_null_writer_is_noop},
  {"move_semantics", test_move_semantics},
  {"destructor_closes", test_destructor_closes},
  {"bad_options", test_bad_options},
  {"bad_input", test_bad_input},
  {"open_fd_stream_options", test_open_fd_stream_options},
  {"spans", test_spans},
  {"sigkill_child", test_sigkill_child},
  {"global", test_global},          // last: it opens the global writer
};

} // namespace

int main()
{
  int failed = 0;
  alarm(300);                       // a deadline: SIGALRM fails the test
#if defined(__cpp_exceptions)
  std::printf("test_cxx: built with exceptions\n");
#else
  std::printf("test_cxx: built with -fno-exceptions\n");
#endif
  for (const Test &t : tests) {
    failures = 0;
    std::printf("RUN: %s\n", t.name);
    std::fflush(stdout);
    t.run();
    std::printf("%s: %s\n", failures ? "FAIL" : "PASS", t.name);
    failed += failures ? 1 : 0;
  }
  std::printf("test_cxx: %d of %zu failed\n", failed,
              sizeof tests / sizeof tests[0]);
  return failed ? 1 : 0;
}
