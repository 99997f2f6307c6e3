// Resetting a loaded object's state to what a fresh load has, so that a kept object
// (probe/object_keeper.h) gives the next run exactly what loading it again would: hashes empty,
// arrays and .bss zero, each ring's consumer at its producer, every task's and socket's storage
// deleted (by the layers' forget iterators). .rodata is frozen and part of the object's name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/link_closer.h"
#include "core/result.h"

struct datacrumbs_bpf;

namespace dc {

// What one kept fd needs. Maps come first, in the object's order, then programs.
struct reset_step {
  enum class kind : uint8_t {
    drain,        // a hash: every entry deleted
    zero,         // an array (and .bss): every element zero
    ring,         // a ring buffer: its consumer moved to its producer
    as_is,        // frozen (.rodata), or storage a forget iterator clears
    program,      // a program, kept as it is
    forget_task,  // a program: an iterator over every task that deletes its storage
    // A link of the run's: of a process that has ended (probe/process_links.h), or of the uprobe
    // warm-up (probe/uprobe_warmup.h). No program of it runs again.
    link,
  };
  kind what = kind::as_is;
  int fd = -1;
};

// The steps for the loaded object `skel` with its programs' fds `programs` (object order); an
// error names a map no step can reset (a new map type, storage without a forget iterator), and
// the object is then not kept.
result<std::vector<reset_step>> reset_plan(const datacrumbs_bpf& skel, const std::vector<int>& programs);

// The plan as text for the keeper's argv, and back.
std::string plan_text(const std::vector<reset_step>& steps);
result<std::vector<reset_step>> parse_plan(const std::string& text);

// Runs `steps`: the object's state becomes a fresh load's. The links among them are inert (their
// processes have ended), so they need not be gone first: they go to `beside`, whose releases
// (RCU grace periods, 30-140 ms for a run's links) nothing waits for, or, without it, are closed
// first (together, so that they share grace periods). Nothing else may be attached.
result<> reset_object(const std::vector<reset_step>& steps, link_closer* beside = nullptr);

}  // namespace dc
