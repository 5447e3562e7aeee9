// A move-only `void()` callable stored inline: the event queue's action.
//
// std::function keeps at most 16 bytes of captures in place (libstdc++), so
// the kernel's commonest events, `[this, cpu, generation]` (24 bytes), each
// cost a heap allocation and a free; with millions of events per simulated
// second that was a tenth of the run time. Captures up to kInlineBytes live
// in the object; larger ones (none in the simulator today) go to the heap.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace sim {

class InlineAction {
 public:
  static constexpr size_t kInlineBytes = 32;

  InlineAction() = default;

  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineAction>>>
  InlineAction(F&& f) {  // NOLINT(google-explicit-constructor): as std::function
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
      ops_ = &kInlineOps<Fn>;
    } else {
      ::new (static_cast<void*>(storage_)) Fn*(new Fn(std::forward<F>(f)));
      ops_ = &kHeapOps<Fn>;
    }
  }

  InlineAction(InlineAction&& o) noexcept : ops_(o.ops_) {
    if (ops_) ops_->move(o.storage_, storage_);
    o.ops_ = nullptr;
  }
  InlineAction& operator=(InlineAction&& o) noexcept {
    if (this != &o) {
      reset();
      ops_ = o.ops_;
      if (ops_) ops_->move(o.storage_, storage_);
      o.ops_ = nullptr;
    }
    return *this;
  }
  InlineAction(const InlineAction&) = delete;
  InlineAction& operator=(const InlineAction&) = delete;
  ~InlineAction() { reset(); }

  void operator()() { ops_->invoke(storage_); }
  explicit operator bool() const { return ops_ != nullptr; }

 private:
  struct Ops {
    void (*invoke)(void*);
    void (*move)(void* from, void* to);  // move-constructs into `to`, destroys `from`
    void (*destroy)(void*);
  };
  template <typename Fn>
  static constexpr Ops kInlineOps{
      [](void* s) { (*static_cast<Fn*>(s))(); },
      [](void* from, void* to) {
        ::new (to) Fn(std::move(*static_cast<Fn*>(from)));
        static_cast<Fn*>(from)->~Fn();
      },
      [](void* s) { static_cast<Fn*>(s)->~Fn(); }};
  template <typename Fn>
  static constexpr Ops kHeapOps{
      [](void* s) { (**static_cast<Fn**>(s))(); },
      [](void* from, void* to) { ::new (to) Fn*(*static_cast<Fn**>(from)); },
      [](void* s) { delete *static_cast<Fn**>(s); }};

  void reset() {
    if (ops_) ops_->destroy(storage_);
    ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace sim
