// Coroutines for task programs and kernel paths.
//
// A simulated task runs a program written as a C++20 coroutine, so that a
// benchmark model reads like its C source: `co_await write(p, fd, 100)`.
// Kernel paths (pipe_write, wait_event, ...) are coroutines too, nested with
// `co_await` and resumed by symmetric transfer.
//
// The only places a task gives up control are the primitive awaits in
// kernel::Proc (burn CPU time, block, exit, yield). They record the task's
// next action and suspend the whole chain; the kernel resumes the innermost
// frame when the action has completed.
#pragma once
#include <coroutine>
#include <cstddef>
#include <exception>
#include <new>
#include <optional>
#include <utility>
#include <vector>

namespace kernel {

template <class T = void>
class [[nodiscard]] Co;

namespace detail {
// Coroutine frames come and go with every kernel path a task enters
// (pipe_write(), wake_up(), ...): millions per simulated second, each a
// malloc and a free. Frames are recycled per size class (64-byte steps)
// from a per-thread cache instead; experiments run simulations on several
// threads, and a frame is freed on the thread that made it.
class FramePool {
 public:
  static void* allocate(std::size_t size) {
    const std::size_t cls = size_class(size);
    if (cls >= kClasses || gone()) return ::operator new(size);
    auto& free = local().free_[cls];
    if (free.empty()) return ::operator new((cls + 1) * kStep);
    void* p = free.back();
    free.pop_back();
    return p;
  }
  static void release(void* p, std::size_t size) noexcept {
    const std::size_t cls = size_class(size);
    if (cls >= kClasses || gone()) return ::operator delete(p);
    auto& free = local().free_[cls];
    try {
      free.push_back(p);
    } catch (...) {
      ::operator delete(p);
    }
  }
  FramePool() = default;
  ~FramePool() {
    gone() = true;
    for (auto& list : free_)
      for (void* p : list) ::operator delete(p);
  }

 private:
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kClasses = 32;  // frames up to 2 KiB
  static std::size_t size_class(std::size_t size) { return (size + kStep - 1) / kStep - 1; }
  // Set once this thread's pool is destroyed: a frame freed during thread
  // exit goes straight back to the heap.
  static bool& gone() {
    thread_local bool flag = false;
    return flag;
  }
  static FramePool& local() {
    thread_local FramePool pool;
    return pool;
  }
  std::vector<void*> free_[kClasses];
};

struct PromiseBase {
  static void* operator new(std::size_t size) { return FramePool::allocate(size); }
  static void operator delete(void* p, std::size_t size) noexcept { FramePool::release(p, size); }
  std::coroutine_handle<> continuation;
  std::exception_ptr error;
  std::suspend_always initial_suspend() noexcept { return {}; }
  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      auto c = h.promise().continuation;
      return c ? c : std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() { error = std::current_exception(); }
};
}  // namespace detail

template <class T>
class [[nodiscard]] Co {
 public:
  struct promise_type : detail::PromiseBase {
    std::optional<T> value;
    Co get_return_object() { return Co(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_value(T v) { value = std::move(v); }
  };
  Co(Co&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Co& operator=(Co&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Co() {
    if (h_) h_.destroy();
  }
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> c) noexcept {
    h_.promise().continuation = c;
    return h_;
  }
  T await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
    return std::move(*h_.promise().value);
  }

 private:
  explicit Co(std::coroutine_handle<promise_type> h) : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

template <>
class [[nodiscard]] Co<void> {
 public:
  struct promise_type : detail::PromiseBase {
    Co get_return_object() { return Co(std::coroutine_handle<promise_type>::from_promise(*this)); }
    void return_void() {}
  };
  Co() = default;
  Co(Co&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Co& operator=(Co&& o) noexcept {
    if (this != &o) {
      if (h_) h_.destroy();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  ~Co() {
    if (h_) h_.destroy();
  }
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> c) noexcept {
    h_.promise().continuation = c;
    return h_;
  }
  void await_resume() {
    if (h_.promise().error) std::rethrow_exception(h_.promise().error);
  }
  // Top-level use by the kernel: the program's own frame.
  [[nodiscard]] std::coroutine_handle<> handle() const { return h_; }
  [[nodiscard]] bool done() const { return !h_ || h_.done(); }
  void rethrow_if_failed() const {
    if (h_ && h_.promise().error) std::rethrow_exception(h_.promise().error);
  }

 private:
  explicit Co(std::coroutine_handle<promise_type> h) : h_(h) {}
  std::coroutine_handle<promise_type> h_;
};

}  // namespace kernel
