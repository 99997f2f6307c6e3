#include "collect/profile_reader.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include "core/bpf_map_keys.h"
#include "core/clock.h"

namespace dc {

namespace {

// Interval first: samples go out in time order. Then by process and file, so that the counters
// of one file (its opens, closes, reads, FS operations) go out together: the trace writer names
// a file once for a run of lines on it, where a hash lookup a line (its FH line's set, its path)
// cost cache misses, a quarter of a many-file run's end.
auto key_fields(const dc_profile_key& k)
{
  return std::tie(k.epoch, k.tgid, k.file.dev, k.file.ino, k.file.mode, k.layer, k.op, k.file2.dev,
                  k.file2.ino, k.file2.mode, k.folded_fs);
}

struct key_less {
  bool operator()(const dc_profile_key& a, const dc_profile_key& b) const
  {
    return key_fields(a) < key_fields(b);
  }
};

void add_counts(dc_profile_counts& to, const dc_profile_counts& c)
{
  to.count += c.count;
  to.time_ns += c.time_ns;
  to.bytes += c.bytes;
  to.pages += c.pages;
}

}  // namespace

// A POSIX counter whose calls each ended a buffered read or write (folded_fs) is two: the calls',
// and the FS operation's with the same count, time and bytes (the page cache's pages are the
// call's alone); each summed with the counter of the same key counted apart. Sorted in a vector
// and summed where keys repeat: a std::map of them (a node and ~20 compares through pointers per
// counter) was a third of the tool's time at the end of a run with 400,000 counters.
std::vector<profile_sample> split_folded(const std::vector<profile_sample>& samples)
{
  std::vector<profile_sample> all;
  all.reserve(samples.size() + samples.size() / 2);
  for (const profile_sample& s : samples) {
    dc_profile_key key = s.key;
    key.folded_fs = 0;
    all.push_back({key, s.counts});
    if (s.key.layer != DC_PROF_POSIX || s.key.folded_fs == 0)
      continue;
    key.layer = DC_PROF_FS;
    key.op = s.key.folded_fs;
    all.push_back({key, {s.counts.count, s.counts.time_ns, s.counts.bytes, 0}});
  }
  std::ranges::sort(all, key_less{}, &profile_sample::key);
  std::vector<profile_sample> out;
  out.reserve(all.size());
  for (const profile_sample& s : all) {
    if (!out.empty() && key_fields(out.back().key) == key_fields(s.key))
      add_counts(out.back().counts, s.counts);
    else
      out.push_back(s);
  }
  return out;
}

std::optional<uint64_t> profile_reader::complete_through(uint64_t decoded_until_ns)
{
  uint64_t now = decoded_until_ns / interval_ns_;
  if (now < 2)
    return read_through_;
  uint64_t ended = now - 2;  // ended a whole interval before decoded_until
  if (!flush_)               // nothing coalesces counts beyond what reached the ring or the map
    return ended;
  std::optional<uint64_t> complete = read_through_;
  while (!flushes_.empty() && flushes_.front().done_ns <= decoded_until_ns) {
    complete = flushes_.front().below_epoch - 1;
    flushes_.pop_front();
  }
  uint64_t asked_below = !flushes_.empty() ? flushes_.back().below_epoch : complete ? *complete + 1 : 0;
  if (ended + 1 > asked_below) {
    auto flushed = flush_(ended + 1);
    if (!flushed && flush_status_)
      flush_status_ = flushed;
    flushes_.push_back({ended + 1, monotonic_now_ns()});
  }
  return complete;
}

std::vector<profile_sample> profile_reader::take(uint64_t decoded_until_ns, bool all,
                                                 std::vector<profile_sample> arrived)
{
  pending_.insert(pending_.end(), arrived.begin(), arrived.end());
  std::optional<uint64_t> through =
      all ? std::optional<uint64_t>(UINT64_MAX) : complete_through(decoded_until_ns);
  if (!through || (read_through_ && *through <= *read_through_))
    return {};
  auto ended = [&](const dc_profile_key& key) { return key.epoch <= *through; };
  std::vector<profile_sample> out;
  if (auto batched = how_ == reading::batches ? take_in_batches(all, ended) : std::nullopt) {
    out = std::move(*batched);
  } else {
    // A kernel without batch operations on hash maps: key by key. Keys first, values and
    // deletes after: deleting the key get_next_key stands on restarts it.
    std::vector<dc_profile_key> keys;
    for_each_map_key<dc_profile_key>(fd_, [&](const dc_profile_key& key) {
      if (ended(key))
        keys.push_back(key);
    });
    for (const dc_profile_key& k : keys) {
      profile_sample s{k, {}};
      if (bpf_map_lookup_and_delete_elem(fd_, &k, &s.counts) == 0)
        out.push_back(s);
    }
  }
  auto later = std::ranges::partition(pending_, [&](const profile_sample& s) { return ended(s.key); });
  out.insert(out.end(), pending_.begin(), later.begin());
  pending_.erase(pending_.begin(), later.begin());
  read_through_ = *through;
  return split_folded(out);
}

// Counters a few thousand a system call: key by key, a take cost two a counter (~0.3 s for a
// full map at a run's end). With `all` (no program runs any more) each batch is deleted as it is
// read; otherwise the map is read whole and the ended counters deleted after (no program adds
// to them any more: take's comment).
std::optional<std::vector<profile_sample>> profile_reader::take_in_batches(
    bool all, const std::function<bool(const dc_profile_key&)>& ended)
{
  constexpr uint32_t batch = 4096;
  std::vector<dc_profile_key> keys(batch);
  std::vector<dc_profile_counts> counts(batch);
  std::vector<profile_sample> out;
  uint64_t from = 0, next = 0;  // the kernel's place in the map (a hash map's: a bucket)
  for (bool first = true;; first = false) {
    uint32_t n = batch;
    int err = all ? bpf_map_lookup_and_delete_batch(fd_, first ? nullptr : &from, &next, keys.data(),
                                                    counts.data(), &n, nullptr)
                  : bpf_map_lookup_batch(fd_, first ? nullptr : &from, &next, keys.data(), counts.data(), &n,
                                         nullptr);
    if (err && err != -ENOENT && first)
      return std::nullopt;  // no batch operations here: nothing was read or deleted
    for (uint32_t i = 0; i < n && (!err || err == -ENOENT); ++i)
      if (ended(keys[i]))
        out.push_back({keys[i], counts[i]});
    if (err == -ENOENT)
      break;    // the end of the map
    if (err) {  // what was not read stays for the next take (and this run's error says so)
      if (flush_status_)
        flush_status_ = fail(std::string("cannot read the profile counters: ") + std::strerror(-err));
      break;
    }
    from = next;
  }
  if (!all) {
    std::vector<dc_profile_key> gone;
    gone.reserve(out.size());
    for (const profile_sample& s : out) gone.push_back(s.key);
    for (size_t i = 0; i < gone.size();) {
      auto n = static_cast<uint32_t>(std::min<size_t>(batch, gone.size() - i));
      int err = bpf_map_delete_batch(fd_, gone.data() + i, &n, nullptr);
      i += n;
      if (err && i < gone.size())
        bpf_map_delete_elem(fd_, &gone[i++]);  // the key the batch stopped at, alone
    }
  }
  return out;
}

}  // namespace dc
