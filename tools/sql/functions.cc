// The SQL functions the Spark translation calls, and Spark's own time
// functions: unix_timestamp, from_unixtime, date_format (with Spark's
// pattern letters), now and current_timestamp (spool_now), current_date,
// and the INTERVAL arithmetic (spool_timestamp_add). A timestamp is text,
// "yyyy-MM-dd HH:mm:ss.ffffff" in UTC (sql_internal.h).
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "spool/storage/schema.h"
#include "spool/storage/store.h"
#include "sql_internal.h"

namespace spool::sql {

bool ParseSqlTimestamp(std::string_view text, int64_t* micros) {
  if (text.ends_with(" UTC")) text.remove_suffix(4);
  else if (text.ends_with("Z")) text.remove_suffix(1);
  if (text.size() == 10) return ParseDateTimeUtc(std::string(text) + " 00:00:00", micros);
  return ParseDateTimeUtc(text, micros);
}

namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

// The fields of a time, as FormatTimestampMicros spells them.
struct Fields {
  std::string year;  // four digits or more, a '-' before the year 0
  int month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0;
};

Fields Split(int64_t micros) {
  const std::string text = FormatTimestampMicros(micros);  // …YYYY-MM-DD HH:MM:SS.ffffff
  const size_t tail = text.size() - 22;                    // where "-MM" starts
  const auto number = [&](size_t at, size_t digits) { return std::stoi(text.substr(at, digits)); };
  return Fields{text.substr(0, tail), number(tail + 1, 2),  number(tail + 4, 2), number(tail + 7, 2),
                number(tail + 10, 2), number(tail + 13, 2), number(tail + 16, 6)};
}

std::string Padded(int value, size_t width) {
  std::string text = std::to_string(value);
  return std::string(text.size() < width ? width - text.size() : 0, '0') + text;
}

// Formats `micros` with a Spark datetime pattern: y, M, d, H, h, m, s, S
// (fraction digits), a (AM/PM), quoted 'literals' ('' for a quote), and
// any other non-letter as itself. Errors: InvalidArgument naming a letter
// the pattern uses that is not one of those.
Status FormatPattern(int64_t micros, std::string_view pattern, std::string* out) {
  const Fields f = Split(micros);
  out->clear();
  for (size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    size_t run = 1;
    while (i + run < pattern.size() && pattern[i + run] == c) ++run;
    if (c == '\'') {
      if (run >= 2 && run % 2 == 0) {  // '' is a quote
        out->append(run / 2, '\'');
        i += run;
        continue;
      }
      const size_t close = pattern.find('\'', i + 1);
      if (close == std::string_view::npos) return Status::InvalidArgument("a pattern with an unclosed quote (')");
      out->append(pattern.substr(i + 1, close - i - 1));
      i = close + 1;
      continue;
    }
    switch (c) {
      case 'y':
        *out += run == 2 ? f.year.substr(f.year.size() - 2) : f.year;
        break;
      case 'M':
        *out += Padded(f.month, run);
        break;
      case 'd':
        *out += Padded(f.day, run);
        break;
      case 'H':
        *out += Padded(f.hour, run);
        break;
      case 'h':
        *out += Padded(f.hour % 12 == 0 ? 12 : f.hour % 12, run);
        break;
      case 'm':
        *out += Padded(f.minute, run);
        break;
      case 's':
        *out += Padded(f.second, run);
        break;
      case 'S':
        if (run > 9) return Status::InvalidArgument("a pattern with more than 9 fraction digits (S)");
        *out += (Padded(f.micros, 6) + "000").substr(0, run);
        break;
      case 'a':
        *out += f.hour < 12 ? "AM" : "PM";
        break;
      default:
        if (std::isalpha(static_cast<unsigned char>(c))) {
          return Status::InvalidArgument(std::string("pattern letter '") + c +
                                         "' is not supported (these are: y M d H h m s S a)");
        }
        out->append(run, c);
    }
    i += run;
  }
  return Status::OK();
}

Context* ContextOf(sqlite3_context* call) { return static_cast<Context*>(sqlite3_user_data(call)); }

void ResultText(sqlite3_context* call, const std::string& text) {
  sqlite3_result_text(call, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

void ResultError(sqlite3_context* call, std::string_view function, const std::string& what) {
  const std::string message = std::string(function) + "(): " + what;
  sqlite3_result_error(call, message.data(), static_cast<int>(message.size()));
}

// A timestamp argument: text as ParseSqlTimestamp reads it. False (and the
// error set) when it is not one; `*null` when it is null.
bool TimestampArg(sqlite3_context* call, std::string_view function, sqlite3_value* value, int64_t* micros, bool* null) {
  *null = sqlite3_value_type(value) == SQLITE_NULL;
  if (*null) return true;
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(value));
  const std::string_view view(text == nullptr ? "" : text, static_cast<size_t>(sqlite3_value_bytes(value)));
  if (sqlite3_value_type(value) == SQLITE_TEXT && ParseSqlTimestamp(view, micros)) return true;
  ResultError(call, function, "'" + std::string(view) + "' is not a timestamp (yyyy-MM-dd HH:mm:ss[.ffffff])");
  return false;
}

void Now(sqlite3_context* call, int, sqlite3_value**) {
  ResultText(call, FormatTimestampMicros(ContextOf(call)->now_us));
}

void CurrentDate(sqlite3_context* call, int, sqlite3_value**) {
  ResultText(call, FormatTimestampMicros(ContextOf(call)->now_us).substr(0, 10));
}

// spool_timestamp_add(ts, n, unit): ts moved by n units (WEEK, DAY, HOUR,
// MINUTE, SECOND).
void TimestampAdd(sqlite3_context* call, int, sqlite3_value** args) {
  int64_t micros = 0;
  bool null = false;
  if (!TimestampArg(call, "INTERVAL", args[0], &micros, &null)) return;
  if (null) return sqlite3_result_null(call);
  const std::string_view unit(reinterpret_cast<const char*>(sqlite3_value_text(args[2])));
  const int64_t seconds = unit == "WEEK"     ? 7 * 86400
                          : unit == "DAY"    ? 86400
                          : unit == "HOUR"   ? 3600
                          : unit == "MINUTE" ? 60
                                             : 1;
  const int64_t n = sqlite3_value_int64(args[1]);
  int64_t delta = 0, moved = 0;
  if (__builtin_mul_overflow(n, seconds * kMicrosPerSecond, &delta) || __builtin_add_overflow(micros, delta, &moved)) {
    return ResultError(call, "INTERVAL", "the result is out of range");
  }
  ResultText(call, FormatTimestampMicros(moved));
}

// unix_timestamp([ts]): seconds since the epoch (now without ts).
void UnixTimestamp(sqlite3_context* call, int argc, sqlite3_value** args) {
  int64_t micros = ContextOf(call)->now_us;
  bool null = false;
  if (argc > 0 && !TimestampArg(call, "unix_timestamp", args[0], &micros, &null)) return;
  if (null) return sqlite3_result_null(call);
  sqlite3_result_int64(
      call, micros >= 0 ? micros / kMicrosPerSecond : -((-micros + kMicrosPerSecond - 1) / kMicrosPerSecond));
}

// from_unixtime(seconds[, pattern]): the time as text, by default
// "yyyy-MM-dd HH:mm:ss" (a fractional number of seconds is truncated).
void FromUnixtime(sqlite3_context* call, int argc, sqlite3_value** args) {
  if (sqlite3_value_type(args[0]) == SQLITE_NULL) return sqlite3_result_null(call);
  const double seconds = sqlite3_value_double(args[0]);
  constexpr double kLimit = static_cast<double>(std::numeric_limits<int64_t>::max()) / kMicrosPerSecond;
  if (sqlite3_value_numeric_type(args[0]) != SQLITE_INTEGER && sqlite3_value_numeric_type(args[0]) != SQLITE_FLOAT) {
    return ResultError(call, "from_unixtime", "needs a number of seconds");
  }
  if (!(std::fabs(seconds) < kLimit)) return ResultError(call, "from_unixtime", "the seconds are out of range");
  const int64_t whole = sqlite3_value_numeric_type(args[0]) == SQLITE_INTEGER ? sqlite3_value_int64(args[0])
                                                                              : static_cast<int64_t>(seconds);
  std::string_view pattern = "yyyy-MM-dd HH:mm:ss";
  if (argc > 1) pattern = reinterpret_cast<const char*>(sqlite3_value_text(args[1]));
  std::string text;
  Status s = FormatPattern(whole * kMicrosPerSecond, pattern, &text);
  if (!s.ok()) return ResultError(call, "from_unixtime", std::string(s.message()));
  ResultText(call, text);
}

// date_format(ts, pattern).
void DateFormat(sqlite3_context* call, int, sqlite3_value** args) {
  int64_t micros = 0;
  bool null = false;
  if (!TimestampArg(call, "date_format", args[0], &micros, &null)) return;
  if (null || sqlite3_value_type(args[1]) == SQLITE_NULL) return sqlite3_result_null(call);
  std::string text;
  Status s = FormatPattern(micros, reinterpret_cast<const char*>(sqlite3_value_text(args[1])), &text);
  if (!s.ok()) return ResultError(call, "date_format", std::string(s.message()));
  ResultText(call, text);
}

}  // namespace

Status RegisterFunctions(sqlite3* db, Context* context) {
  struct Function {
    const char* name;
    int args;
    void (*call)(sqlite3_context*, int, sqlite3_value**);
  };
  static constexpr Function kFunctions[] = {
      {"spool_now", 0, Now},
      {"spool_current_date", 0, CurrentDate},
      {"spool_timestamp_add", 3, TimestampAdd},
      {"unix_timestamp", 0, UnixTimestamp},
      {"unix_timestamp", 1, UnixTimestamp},
      {"from_unixtime", 1, FromUnixtime},
      {"from_unixtime", 2, FromUnixtime},
      {"date_format", 2, DateFormat},
  };
  for (const Function& f : kFunctions) {
    // Pure functions of their arguments and of the statement's start time.
    const int flags = SQLITE_UTF8 | SQLITE_INNOCUOUS | (f.args > 0 ? SQLITE_DETERMINISTIC : 0);
    if (sqlite3_create_function(db, f.name, f.args, flags, context, f.call, nullptr, nullptr) != SQLITE_OK) {
      return Status::Failed(std::string("SQLite refused the function ") + f.name + ": " + sqlite3_errmsg(db));
    }
  }
  return Status::OK();
}

}  // namespace spool::sql
