// ResultTable: a TunableOp's lock-free cache Key -> resolved solution index. Readers take no lock
// and allocate nothing; writers (under the op's mutex) insert or replace immutable entries.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tunekit {

/// How a cached entry stays valid.
enum class CachedKind : std::uint8_t {
  kResult = 0,      ///< a stored result: valid while ResultsManager::epoch() equals the stamp
  kFallback = 1,    ///< a decision without a stored result (Default, wildcard, untuned): valid
                    ///< while ResultsManager::generation() equals the stamp
  kConfirming = 2,  ///< a stored result whose winner is being confirmed (Confirmation): valid
                    ///< as kResult, but every call takes the op's slow path
};

/// One immutable cache entry.
template <class Key>
struct CachedSolution {
  Key key;                      ///< the problem
  std::uint32_t candidate = 0;  ///< index into the op's candidate list
  CachedKind kind = CachedKind::kResult;
  std::uint64_t stamp = 0;  ///< epoch or generation the entry was resolved under
  /// The resolved object itself (the op's candidate), so that a hit needs no second lookup;
  /// null where the owner does not use it.
  void* target = nullptr;
};

/// Insert-only open-addressing hash table (linear probing, load <= 1/2) of atomic pointers to
/// immutable entries. find() is wait-free for readers: one acquire load of the table, then
/// acquire loads of slots. publish() must be serialised by the caller (TunableOp's mutex); it
/// replaces a key's entry in place or inserts it, doubling the table when half full. Retired
/// tables and replaced entries stay alive until the ResultTable is destroyed, so a reader never
/// sees freed memory.
/// `Hash` is `std::uint64_t(const Key&)` (Params::hash); the result is remixed (a Fibonacci
/// multiply, high half folded down) before use, so weak hashes are fine.
template <class Key, std::uint64_t (*Hash)(const Key&)>
class ResultTable {
 public:
  /// The immutable entry type.
  using Entry = CachedSolution<Key>;

  /// An empty table of 16 slots.
  ResultTable() { grow_to(kInitialSlots); }
  ResultTable(const ResultTable&) = delete;
  ResultTable& operator=(const ResultTable&) = delete;

  /// The entry for `key`, or nullptr. Lock-free, allocation-free, safe against concurrent
  /// publish().
  [[gnu::always_inline]] const Entry* find(const Key& key) const noexcept {
    const Slots* t = current_.load(std::memory_order_acquire);
    std::size_t i = mix(Hash(key)) & t->mask;
    for (;;) {
      const Entry* e = t->slots[i].load(std::memory_order_acquire);
      if (e == nullptr) return nullptr;
      if (e->key == key) return e;
      i = (i + 1) & t->mask;
    }
  }

  /// Inserts `entry`, or replaces the entry with the same key. Caller serialises publishers.
  const Entry* publish(const Entry& entry) {
    entries_.push_back(std::make_unique<Entry>(entry));
    const Entry* e = entries_.back().get();
    Slots* t = tables_.back().get();
    std::size_t i = mix(Hash(e->key)) & t->mask;
    for (;;) {
      const Entry* old = t->slots[i].load(std::memory_order_relaxed);
      if (old == nullptr) break;
      if (old->key == e->key) {
        t->slots[i].store(e, std::memory_order_release);
        return e;
      }
      i = (i + 1) & t->mask;
    }
    if (2 * (used_ + 1) > t->mask + 1) {
      grow_to(2 * (t->mask + 1));
      t = tables_.back().get();
      i = mix(Hash(e->key)) & t->mask;
      while (t->slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & t->mask;
    }
    t->slots[i].store(e, std::memory_order_release);
    ++used_;
    return e;
  }

  /// Distinct keys stored.
  std::size_t size() const noexcept { return used_; }
  /// Slots of the current table (a power of two).
  std::size_t capacity() const noexcept { return tables_.back()->mask + 1; }

 private:
  static constexpr std::size_t kInitialSlots = 16;

  struct Slots {
    std::size_t mask = 0;
    std::unique_ptr<std::atomic<const Entry*>[]> slots;
  };

  static std::uint64_t mix(std::uint64_t x) noexcept {
    // Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4): one multiply by 2^64 / golden ratio, with
    // the high half folded into the low bits that the slot mask keeps.
    x *= 0x9e3779b97f4a7c15ULL;
    return x ^ (x >> 32);
  }

  void grow_to(std::size_t slot_count) {
    auto next = std::make_unique<Slots>();
    next->mask = slot_count - 1;
    next->slots = std::make_unique<std::atomic<const Entry*>[]>(slot_count);
    for (std::size_t i = 0; i < slot_count; ++i) {
      next->slots[i].store(nullptr, std::memory_order_relaxed);
    }
    if (!tables_.empty()) {
      const Slots* old = tables_.back().get();
      for (std::size_t j = 0; j <= old->mask; ++j) {
        const Entry* e = old->slots[j].load(std::memory_order_relaxed);
        if (e == nullptr) continue;
        std::size_t i = mix(Hash(e->key)) & next->mask;
        while (next->slots[i].load(std::memory_order_relaxed) != nullptr) i = (i + 1) & next->mask;
        next->slots[i].store(e, std::memory_order_relaxed);
      }
    }
    current_.store(next.get(), std::memory_order_release);
    tables_.push_back(std::move(next));
  }

  std::atomic<const Slots*> current_{nullptr};
  std::vector<std::unique_ptr<Slots>> tables_;   // last one is current; earlier ones retired
  std::vector<std::unique_ptr<Entry>> entries_;  // every entry ever published
  std::size_t used_ = 0;
};

}  // namespace tunekit
