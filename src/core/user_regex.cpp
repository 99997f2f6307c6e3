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
// A back-reference over 9 digits, a repeat count over max_repeat, or a pattern whose copies add
// up to over max_copies is refused before it gets there.
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

// Walks the pattern adding up what the compiler will copy: each group's size is the sum of its
// parts, and a repeat multiplies the part before it (a group's whole size, or 1). Unbalanced
// parentheses are left for std::regex to report.
bool within_limits(const std::string& p)
{
  std::vector<long> sums{0};  // per open group: the size of its parts so far
  long atom = 0;              // the size of the part a repeat would copy
  auto add = [&](long size) {
    atom = size;
    sums.back() += size;
    return sums.back() <= max_copies;
  };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    bool ok = true;
    if (c == '\\') {
      number n = read_number(p, i + 1);
      if (n.digits > 9)
        return false;
      i += std::max<size_t>(n.digits, 1);  // a back-reference, or one escaped character
      ok = add(1);
    } else if (c == '[') {
      i = class_end(p, i);
      ok = add(1);
    } else if (c == '(') {
      sums.push_back(0);
      atom = 0;
    } else if (c == ')' && sums.size() > 1) {
      long group = std::max<long>(sums.back(), 1);
      sums.pop_back();
      ok = add(group);
    } else if (c == '{' && read_number(p, i + 1).digits > 0) {
      number low = read_number(p, i + 1);
      size_t j = i + 1 + low.digits;
      number high = j < p.size() && p[j] == ',' ? read_number(p, j + 1) : number{};
      if (low.digits > 9 || high.digits > 9)
        return false;
      long count = std::max(low.value, high.value);
      if (count > max_repeat)
        return false;
      sums.back() += atom * (std::max<long>(count, 1) - 1);
      atom *= std::max<long>(count, 1);
      ok = sums.back() <= max_copies;
      i = j < p.size() && p[j] == ',' ? j + 1 + high.digits : j;  // at its '}', stepped over next
    } else if (c != '|' && c != '*' && c != '+' && c != '?') {
      ok = add(1);
    }
    if (!ok)
      return false;
  }
  return true;
}

}  // namespace

result<std::regex> compile_user_regex(const std::string& pattern, std::string_view context)
{
  std::string prefix = std::string(context) + ": invalid regex '" + pattern + "': ";
  if (!within_limits(pattern))
    return fail(prefix + "a back-reference of more than 9 digits, a repeat count over " +
                    std::to_string(max_repeat) + ", or repeats that expand to over " +
                    std::to_string(max_copies) + " parts",
                2);
  try {
    return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return fail(prefix + e.what(), 2);
  }
}

}  // namespace dc
