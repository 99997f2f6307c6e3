// What this kernel refused of the BPF object, remembered for the next run configured the same
// way. A refused program makes a run load the object again without it (its layer left out, or
// the optional program alone): a kernel without uprobe sessions (6.6-6.12) refused one optional
// program in every run, which then took 667 ms instead of ~300, and a kept object
// (probe/object_keeper.h), named after what finally loaded, was never asked for by that name.
// The next run configured the same way leaves out at once what was refused.
//
// Remembered per configuration (the first attempt's kept_object_key: object bytes, kernel,
// .rodata, maps, programs) and per boot (what the kernel allows may change with its boot
// parameters, lockdown among them), and only for refusals the kernel gives every time: the
// verifier's and the kernel's lack of a feature, never a lack of memory. Kept in the minimal
// BTF's cache directory, trusted on the same terms (probe/core_btf.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "probe/layer.h"

namespace dc {

struct refusals {
  std::vector<std::string> programs;                        // optional programs left out
  std::vector<std::pair<std::string, std::string>> layers;  // layer left out, and why
  bool empty() const { return programs.empty() && layers.empty(); }
};

// The refusals remembered in `dir` for configuration `key` this boot; none when there is no
// such file, or it cannot be trusted or read.
refusals recall_refusals(const std::string& dir, const std::string& key);

// Remembers `r` for `key` (an empty `r` forgets). The error says why not; the next run then only
// finds the refusals again.
result<> remember_refusals(const std::string& dir, const std::string& key, const refusals& r);

// Applies `known` to a load's choice: its programs join `left_out`, its layers `refused` (with a
// report each, as a refusal found now has). Whether there was anything to apply.
bool leave_out(const refusals& known, const std::vector<std::unique_ptr<layer>>& layers,
               std::vector<std::string>& refused, std::vector<std::string>& left_out,
               std::vector<layer_report>& reports);

// What a load left out, to be remembered: its optional programs and its refused layers' reports.
refusals refusals_of(const std::vector<std::string>& left_out, const std::vector<layer_report>& reports);

// Whether a program load that failed with `err` (a negative errno) is the kernel's lasting
// answer: the verifier's refusal or a feature it lacks, not a passing lack of memory.
bool lasting_refusal(int err);

}  // namespace dc
