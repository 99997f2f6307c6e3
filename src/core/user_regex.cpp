#include "core/user_regex.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace dc {

namespace {

// libstdc++'s regex compiler reads the number of a back-reference (\N) or of a repeat ({n,m})
// into a long without checking for overflow: undefined behaviour for 19 digits; and it copies a
// repeated expression once per count, so a{10000000} takes seconds and gigabytes to compile
// (both found by the names fuzz target), and so does (a{1000}){1000}: nested counts multiply.
// A back-reference over 9 digits, a repeat count over max_repeat, a pattern whose copies add up
// to over max_copies, or repeats that make matching exponential (pattern_scan) are refused
// before std::regex sees them.
constexpr long max_repeat = 1000;
constexpr long max_copies = 100'000;

// The digits at p[i..]: how many there are, and their value when there are at most 9.
struct number {
  size_t digits = 0;
  long value = 0;
};

number read_number(const std::string& p, size_t i)
{
  number n;
  while (i + n.digits < p.size() && std::isdigit(static_cast<unsigned char>(p[i + n.digits]))) {
    if (n.digits < 9)
      n.value = n.value * 10 + (p[i + n.digits] - '0');
    ++n.digits;
  }
  return n;
}

// The end of the bracket expression opened at p[i] == '[' (its ']'), or p.size().
size_t class_end(const std::string& p, size_t i)
{
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^')
    ++j;
  if (j < p.size() && p[j] == ']')
    ++j;  // a leading ']' is a member
  for (; j < p.size() && p[j] != ']'; ++j)
    if (p[j] == '\\')
      ++j;
  return j;
}

// The pattern as libstdc++'s compiler and matcher will take it, one token at a time: what each
// group's parts add up to once repeats are copied (a repeat multiplies the part before it: a
// group's whole size, or 1), and where a repeat repeats a repeat. The matcher backtracks, so an
// unbounded repeat of something that itself repeats without bound ((a+)*, (a*)*) or a repeat
// stacked on a repeat (a+++, a*+: libstdc++ takes them, ECMAScript does not) takes time
// exponential in the name matched. Unbalanced parentheses are left for std::regex to report.
class pattern_scan {
 public:
  // What is wrong with `p`, or the empty string.
  std::string refusal(const std::string& p)
  {
    for (size_t i = 0; i < p.size() && why_.empty(); ++i) {
      char c = p[i];
      if (c == '\\') {
        number n = read_number(p, i + 1);
        if (n.digits > 9)
          return "a back-reference of more than 9 digits";
        i += std::max<size_t>(n.digits, 1);  // a back-reference, or one escaped character
        part(1, false);
      } else if (c == '[') {
        i = class_end(p, i);
        part(1, false);
      } else if (c == '(') {
        groups_.push_back({});
        last_ = {};
      } else if (c == ')' && groups_.size() > 1) {
        group g = groups_.back();
        groups_.pop_back();
        part(std::max<long>(g.size, 1), g.unbounded);
      } else if (c == '{' && read_number(p, i + 1).digits > 0) {
        number low = read_number(p, i + 1);
        size_t j = i + 1 + low.digits;
        bool open_ended = j + 1 < p.size() && p[j] == ',' && p[j + 1] == '}';
        number high = j < p.size() && p[j] == ',' ? read_number(p, j + 1) : number{};
        if (low.digits > 9 || high.digits > 9 || std::max(low.value, high.value) > max_repeat)
          return "a repeat count over " + std::to_string(max_repeat);
        repeat(std::max(low.value, high.value), open_ended);
        i = j < p.size() && p[j] == ',' ? j + 1 + high.digits : j;  // at its '}', stepped over next
      } else if (c == '*' || c == '+') {
        repeat(1, true);
      } else if (c == '?') {
        if (last_.lazy_allowed)
          last_.lazy_allowed = false;  // after a repeat: that repeat is lazy
        else
          repeat(1, false);  // optional
      } else if (c == '|') {
        last_ = {};
      } else {
        part(1, false);
      }
    }
    return why_;
  }

 private:
  struct group {
    long size = 0;           // its parts, copies counted
    bool unbounded = false;  // it holds an unbounded repeat
  };
  struct last_part {
    long size = 0;              // what a repeat here would copy
    bool unbounded = false;     // it holds an unbounded repeat
    bool repeated = false;      // it is a repeat: another repeat here would be stacked
    bool lazy_allowed = false;  // a '?' here makes the repeat before it lazy
  };

  void part(long size, bool unbounded)
  {
    last_ = {size, unbounded, false, false};
    groups_.back().unbounded = groups_.back().unbounded || unbounded;
    add(size);
  }
  void repeat(long count, bool unbounded)
  {
    if (last_.repeated) {
      why_ = "a repeat of a repeat (as in a++ or a*+)";
      return;
    }
    if (unbounded && last_.unbounded) {
      why_ = "an unbounded repeat of a group that repeats without bound (as in (a+)* or (a*)+)";
      return;
    }
    count = std::max<long>(count, 1);
    add(last_.size * (count - 1));
    last_ = {last_.size * count, last_.unbounded || unbounded, true, true};
    groups_.back().unbounded = groups_.back().unbounded || last_.unbounded;
  }
  void add(long size)
  {
    groups_.back().size += size;
    if (groups_.back().size > max_copies)
      why_ = "repeats that expand to over " + std::to_string(max_copies) + " parts";
  }

  std::vector<group> groups_{1};  // the open groups, the pattern itself first
  last_part last_;
  std::string why_;
};

}  // namespace

result<std::regex> compile_user_regex(const std::string& pattern, std::string_view context)
{
  std::string prefix = std::string(context) + ": invalid regex '" + pattern + "': ";
  if (std::string why = pattern_scan().refusal(pattern); !why.empty())
    return fail(prefix + why, 2);
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return fail(prefix + e.what(), 2);
  }
}

}  // namespace dc
