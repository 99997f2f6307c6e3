#include "core/latency_sketch.h"

#include <algorithm>
#include <cmath>

namespace dc {

namespace {

constexpr double gamma_ = (1 + latency_sketch::relative_error) / (1 - latency_sketch::relative_error);
const double log_gamma = std::log(gamma_);

size_t bucket_of(uint64_t v)
{
  if (v < latency_sketch::exact_below)
    return v;
  double k = std::ceil(std::log(static_cast<double>(v) / latency_sketch::exact_below) / log_gamma);
  return latency_sketch::exact_below + static_cast<size_t>(std::max(0.0, k));
}

// Bucket k above the exact range holds (E*g^(k-1), E*g^k]; its representative 2*E*g^k/(g+1)
// is within relative_error of every value in it.
double representative(size_t b)
{
  if (b < latency_sketch::exact_below)
    return static_cast<double>(b);
  double k = static_cast<double>(b - latency_sketch::exact_below);
  return 2.0 * latency_sketch::exact_below * std::pow(gamma_, k) / (gamma_ + 1);
}

}  // namespace

void latency_sketch::add(uint64_t value_us, uint64_t times)
{
  size_t b = bucket_of(value_us);
  if (b >= buckets.size())
    buckets.resize(b + 1);
  buckets[b] += times;
  count += times;
  max = std::max(max, value_us);
}

void latency_sketch::merge(const latency_sketch& other)
{
  if (other.buckets.size() > buckets.size())
    buckets.resize(other.buckets.size());
  for (size_t i = 0; i < other.buckets.size(); ++i) buckets[i] += other.buckets[i];
  count += other.count;
  max = std::max(max, other.max);
}

double latency_sketch::quantile(double q) const
{
  if (count == 0)
    return 0;
  uint64_t rank =
      std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(q * static_cast<double>(count))), 1, count);
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    seen += buckets[b];
    if (seen >= rank)
      return std::min(representative(b), static_cast<double>(max));
  }
  return static_cast<double>(max);
}

nlohmann::json latency_sketch::partial() const
{
  nlohmann::json b = nlohmann::json::array();
  for (size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i])
      b.push_back({i, buckets[i]});
  return {{"buckets", std::move(b)}, {"count", count}, {"max", max}};
}

dc::result<latency_sketch> latency_sketch::from_partial(const nlohmann::json& j)
{
  latency_sketch s;
  try {
    for (const auto& pair : j.at("buckets")) {
      size_t b = pair.at(0).get<size_t>();
      if (b > (1u << 20))
        return dc::fail("latency sketch bucket out of range");
      if (b >= s.buckets.size())
        s.buckets.resize(b + 1);
      s.buckets[b] += pair.at(1).get<uint64_t>();
    }
    s.count = j.at("count").get<uint64_t>();
    s.max = j.at("max").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("latency sketch: ") + e.what());
  }
  return s;
}

nlohmann::json latency_sketch::report() const
{
  if (count == 0)
    return {{"p50", nullptr}, {"p90", nullptr}, {"p99", nullptr}, {"max", nullptr}};
  auto round2 = [](double v) { return std::round(v * 100) / 100; };
  return {{"p50", round2(quantile(0.50))},
          {"p90", round2(quantile(0.90))},
          {"p99", round2(quantile(0.99))},
          {"max", max}};
}

}  // namespace dc
