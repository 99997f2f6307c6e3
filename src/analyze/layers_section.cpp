#include "analyze/layers_section.h"

#include <algorithm>

#include "analyze/record_values.h"
#include "core/category.h"
#include "core/map_entry.h"

namespace dc::analyze {

std::pair<op_totals*, layer_times*> layers_section::find_or_add(std::string_view cat, std::string_view name)
{
  if (auto* hit = index.find({cat, name}))
    return *hit;
  auto& layer = map_entry(ops, cat);
  auto& op = map_entry(layer.second, name);
  std::pair<op_totals*, layer_times*> found{&op.second, &map_entry(layers, cat).second};
  return index.add({layer.first, op.first}, found);
}

void layers_section::add(const record& r, const call_facts& c)
{
  if (!c.call)
    return;
  auto [o_ptr, l_ptr] = find_or_add(r.cat, r.name);
  uint64_t n = c.count, b = c.bytes, t = c.time_us;
  op_totals& o = *o_ptr;
  o.count += n;
  o.bytes += b;
  o.time_us += t;
  layer_times& l = *l_ptr;
  l.count += n;
  l.bytes += b;
  l.time_us += t;
  if (r.ph != phase::complete)
    return;
  // A block request whose end went unseen (args.end_unseen) has its bytes and no time.
  if (!same_text(r.cat, category::block) || !r.arg("end_unseen"))
    o.latency.add(static_cast<uint64_t>(r.dur_us));
  if (r.level >= 1 && r.p_idx < 0)
    l.top_level_us += t;
  std::vector<span_ref>* levels = nullptr;
  if (r.level >= 1 && r.id >= 0) {
    std::pair<uint64_t, int64_t> thread{r.pid, static_cast<int64_t>(r.tid)};
    if (!last_levels || thread != last_thread) {
      last_levels = &last_at_level[thread];
      last_thread = thread;
    }
    levels = last_levels;
    if (levels->size() <= static_cast<size_t>(r.level))
      levels->resize(static_cast<size_t>(r.level) + 1);
  }
  if (r.p_idx >= 0) {
    span_ref* parent_span = levels && r.level >= 2 ? &(*levels)[static_cast<size_t>(r.level) - 1] : nullptr;
    std::pair<uint64_t, int64_t> parent{r.pid, r.p_idx};
    if (parent_span && parent_span->id == r.p_idx) {
      parent_span->layer->nested_us += t;  // its parent came first
    } else if (latest.used && latest.parent == parent) {
      latest.us += t;
    } else {
      if (latest.used) {
        waiting[latest.parent] += latest.us;
        latest.used = false;
      }
      auto w = waiting.empty() ? waiting.end() : waiting.find(parent);
      if (w != waiting.end())
        w->second += t;
      else
        latest = {parent, t, true};
    }
  }
  if (levels)
    (*levels)[static_cast<size_t>(r.level)] = {r.id, &l};
  if (r.id < 0)
    return;
  std::pair<uint64_t, int64_t> self{r.pid, r.id};
  if (latest.used && latest.parent == self) {
    l.nested_us += latest.us;
    latest.used = false;
  } else if (!waiting.empty()) {
    if (auto w = waiting.find(self); w != waiting.end()) {
      l.nested_us += w->second;
      waiting.erase(w);
    }
  }
}

void layers_section::end_file()
{
  if (latest.used)
    orphan_us += latest.us;
  latest.used = false;
  for (const auto& [key, t] : waiting) orphan_us += t;
  waiting.clear();
  last_at_level.clear();
  last_levels = nullptr;
}

void layers_section::merge(const layers_section& o)
{
  for (const auto& [layer, by_op] : o.ops)
    for (const auto& [name, q] : by_op) {
      op_totals& p = ops[layer][name];
      p.count += q.count;
      p.bytes += q.bytes;
      p.time_us += q.time_us;
      p.latency.merge(q.latency);
    }
  for (const auto& [layer, q] : o.layers) {
    layer_times& p = layers[layer];
    p.count += q.count;
    p.bytes += q.bytes;
    p.time_us += q.time_us;
    p.nested_us += q.nested_us;
    p.top_level_us += q.top_level_us;
  }
  orphan_us += o.orphan_us;
}

nlohmann::json layers_section::partial() const
{
  nlohmann::json o = nlohmann::json::array(), l = nlohmann::json::array();
  for (const auto& [layer, by_op] : ops)
    for (const auto& [name, p] : by_op)
      o.push_back({{"layer", layer},
                   {"op", name},
                   {"count", p.count},
                   {"bytes", p.bytes},
                   {"time_us", p.time_us},
                   {"latency", p.latency.partial()}});
  for (const auto& [layer, p] : layers)
    l.push_back({{"layer", layer},
                 {"count", p.count},
                 {"bytes", p.bytes},
                 {"time_us", p.time_us},
                 {"nested_us", p.nested_us},
                 {"top_level_us", p.top_level_us}});
  return {{"ops", o}, {"layers", l}, {"orphan_us", orphan_us}};
}

dc::result<layers_section> layers_section::from_partial(const nlohmann::json& j)
{
  layers_section s;
  try {
    for (const auto& q : j.at("ops")) {
      op_totals& p = s.ops[q.at("layer").get<std::string>()][q.at("op").get<std::string>()];
      p.count = q.at("count").get<uint64_t>();
      p.bytes = q.at("bytes").get<uint64_t>();
      p.time_us = q.at("time_us").get<uint64_t>();
      auto sketch = latency_sketch::from_partial(q.at("latency"));
      if (!sketch)
        return std::unexpected(sketch.error());
      p.latency = std::move(*sketch);
    }
    for (const auto& q : j.at("layers")) {
      layer_times& p = s.layers[q.at("layer").get<std::string>()];
      p.count = q.at("count").get<uint64_t>();
      p.bytes = q.at("bytes").get<uint64_t>();
      p.time_us = q.at("time_us").get<uint64_t>();
      p.nested_us = q.at("nested_us").get<uint64_t>();
      p.top_level_us = q.at("top_level_us").get<uint64_t>();
    }
    s.orphan_us = j.at("orphan_us").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return dc::fail(std::string("layers: ") + e.what());
  }
  return s;
}

nlohmann::json layers_section::report(const name_map&, double wall_s) const
{
  auto rate = [&](double v) { return wall_s > 0 ? nlohmann::json(v / wall_s) : nlohmann::json(nullptr); };
  nlohmann::json o = nlohmann::json::array(), l = nlohmann::json::array();
  for (const auto& [layer, by_op] : ops)
    for (const auto& [name, p] : by_op)
      o.push_back({{"layer", layer},
                   {"op", name},
                   {"count", p.count},
                   {"bytes", p.bytes},
                   {"time_us", p.time_us},
                   {"ops_per_s", rate(static_cast<double>(p.count))},
                   {"mb_per_s", rate(static_cast<double>(p.bytes) / 1e6)},
                   {"latency_us", p.latency.report()}});
  for (const auto& [layer, p] : layers)
    l.push_back({{"layer", layer},
                 {"count", p.count},
                 {"bytes", p.bytes},
                 {"time_us", p.time_us},
                 {"unoverlapped_us", p.time_us - std::min(p.time_us, p.nested_us)},
                 {"top_level_us", p.top_level_us}});
  return {{"layers", o}, {"layer_time", l}};
}

}  // namespace dc::analyze
