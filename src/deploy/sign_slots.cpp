#include "deploy/sign_slots.h"

#include <algorithm>
#include <map>

namespace dc {

slot_choice choose_slot(std::span<const slot_holder> held, std::optional<uint32_t> uid)
{
  std::map<std::optional<uint32_t>, size_t> count;
  for (const auto& h : held) ++count[h.uid];
  slot_choice choice;
  if (auto own = count.find(uid); own != count.end())
    choice.own = own->second;
  for (const auto& [holder, n] : count) choice.most = std::max(choice.most, n);
  // own + 1 < most: the new holder still holds fewer than the displaced one did, so no two uids
  // trade a slot forever. own == 0: a uid with nothing is never kept out, even when every slot
  // is held by a different uid with one (then the oldest is displaced, round after round).
  if (choice.own != 0 && choice.own + 1 >= choice.most)
    return choice;
  // The busiest uids' oldest connection that is still silent or sending (what holds a slot
  // without being served), else their oldest: one whose reply a client does not read holds a
  // slot too.
  for (size_t i = 0; i < held.size(); ++i) {
    if (count[held[i].uid] != choice.most)
      continue;
    if (!held[i].request_read) {
      choice.displace = i;
      break;
    }
    if (!choice.displace)
      choice.displace = i;
  }
  return choice;
}

}  // namespace dc
