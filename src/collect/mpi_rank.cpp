#include "collect/mpi_rank.h"

#include <charconv>

namespace dc {

namespace {

// The value of `name` in the block, or an empty view.
std::string_view find_variable(std::string_view block, std::string_view name)
{
  size_t at = 0;
  while (at < block.size()) {
    size_t end = block.find('\0', at);
    std::string_view entry =
        block.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return {};
}

int number(std::string_view text)
{
  int v = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && v >= 0 ? v : -1;
}

}  // namespace

mpi_rank mpi_rank_from_environ(std::string_view block)
{
  struct launcher {
    std::string_view rank, size, other_size;
  };
  static constexpr launcher launchers[] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", ""},
      {"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE"},
      {"PMI_RANK", "PMI_SIZE", ""},
      {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS"},
      {"FLUX_TASK_RANK", "FLUX_JOB_SIZE", ""},
  };
  for (const auto& l : launchers) {
    int rank = number(find_variable(block, l.rank));
    if (rank < 0)
      continue;
    int size = number(find_variable(block, l.size));
    if (size < 0 && !l.other_size.empty())
      size = number(find_variable(block, l.other_size));
    return {rank, size};
  }
  return {};
}

}  // namespace dc
