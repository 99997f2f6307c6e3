#include "analyze/folded_fs.h"

#include "core/category.h"

namespace dc::analyze {

bool unfold_fs(const record& call, folded_fs& out)
{
  if (call.texts.empty() || call.ph != phase::complete || call.cat != category::posix)
    return false;
  std::string_view op = call.text("fs");
  if (op.empty())
    return false;
  record& r = out.r;
  r = call;
  r.name = op;
  r.cat = category::fs;
  // An id of its own, which no line names (trace ids stay below 2^53): nesting needs one.
  r.id = call.id >= 0 ? call.id | (int64_t{1} << 62) : -1;
  r.p_idx = call.id;
  r.level = call.level + 1;
  r.texts = {};
  size_t n = 0;
  out.args[n++] = {"ret", call.arg("ret").value_or(0)};
  if (auto first = call.arg("first_page")) {
    out.args[n++] = {"first_page", *first};
    out.args[n++] = {"last_page", call.arg("last_page").value_or(*first)};
  } else if (auto offset = call.arg("fs_offset")) {
    out.args[n++] = {"offset", *offset};
  }
  r.args = {out.args.data(), n};
  return true;
}

}  // namespace dc::analyze
