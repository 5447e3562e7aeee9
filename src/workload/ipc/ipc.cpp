#include "workload/ipc/ipc.hpp"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <utility>

namespace workload {

using kernel::WF_SYNC;

namespace {
constexpr int64_t PAGE_SIZE = 4096;

// The copy of `bytes` last written on `from_cpu`. Its lines are counted
// as moved (hw::Machine::count_lines_moved()) unless the caller tracks
// them line by line (2.4's pipe page).
int64_t copy_cost(Proc& p, int from_cpu, int64_t bytes, bool count_lines = true) {
  const auto& c = p.costs();
  const auto& m = p.kernel().machine();
  if (count_lines) m.count_lines_moved(from_cpu, p.cpu(), (bytes + c.cache_line_bytes - 1) / c.cache_line_bytes);
  return bytes * c.copy_ns_per_kib / 1024 + m.transfer_cost(from_cpu, p.cpu(), bytes);
}

// pipe_wait(): sleep on the queue without re-checking (the caller loops);
// the caller (pipe_read/pipe_write) names the wait, as wchan would one frame up.
// The socket waits of the unix_sock_lines switch sleep through it too.
Co<void> pipe_wait(Proc& p, WaitQueue& wq, const char* caller, bool exclusive = false) {
  bool woken = false;
  co_await p.wait_event(wq, [&woken] { return std::exchange(woken, true); }, caller, exclusive);
}


// The unix_sock_lines and pipe_lines switches (docs/design.md): each
// metadata line v4.0's af_unix.c or fs/pipe.c loads or stores, charged where
// its copies are, by the rule hw::LineStalls states (loads stall, plain
// stores wait in the store buffer for the next locked instruction).

// The cost of a line last written on `cpu`, one of `fetched` lines this
// access brings from there (counted as moved; 0 when the path holds them
// already).
int64_t transfer_from(Proc& p, int cpu, int64_t fetched = 1) {
  if (cpu < 0) return 0;
  p.kernel().machine().count_lines_moved(cpu, p.cpu(), fetched);
  return p.kernel().machine().line_transfer(cpu, p.cpu());
}
// `co_await charge(p, ns)`: kernel work of ns, or nothing at all when ns is
// 0 (no noise drawn, no segment). An awaitable, not a coroutine: the paths
// charge millions of times a run, and a coroutine frame each time (made,
// started, finished, freed) cost about a tenth of a messaging run's
// instructions. It is awaited where it is made, so p.sys() runs at the
// moment the coroutine's body used to.
struct Charge {
  std::optional<Proc::Primitive> work;
  bool await_ready() const noexcept { return !work; }
  void await_suspend(std::coroutine_handle<> h) const noexcept { work->await_suspend(h); }
  void await_resume() const noexcept {}
};
[[nodiscard]] Charge charge(Proc& p, int64_t ns) { return ns ? Charge{p.sys(ns)} : Charge{}; }
// One of: nothing, kernel work (charge()), or a path's coroutine. For a
// helper that only picks which, and would otherwise make a coroutine frame
// of its own to await its pick; awaited where it is made, like Charge.
struct Step {
  std::optional<Co<void>> path;
  Charge work;
  Step() = default;
  Step(Co<void> c) : path(std::move(c)) {}  // NOLINT: implicit, as the helpers return either
  Step(Charge w) : work(std::move(w)) {}    // NOLINT
  bool await_ready() const noexcept { return !path && work.await_ready(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) noexcept {
    if (path) return path->await_suspend(h);
    work.await_suspend(h);
    return std::noop_coroutine();
  }
  void await_resume() {
    if (path) path->await_resume();
  }
};
// One task's path through those lines, on whichever CPU it runs now.
struct LinePath {
  explicit LinePath(Proc& proc) : p(proc) {}
  Proc& p;
  hw::LineStalls stalls;
  const hw::Machine& machine() const { return p.kernel().machine(); }
  void load(CacheLine& line) { stalls.load(line.read(machine(), p.cpu())); }
  void store(CacheLine& line) { stalls.store(line.write(machine(), p.cpu())); }
  void locked(CacheLine& line) { stalls.locked(line.write(machine(), p.cpu())); }
  // smp_mb(), or the locked instruction that begins the next path
  // (try_to_wake_up()'s pi_lock, schedule()'s rq->lock).
  void barrier() { stalls.locked(0); }
  // A line known only by the CPU that wrote it last.
  void load_from(int cpu) { stalls.load(transfer_from(p, cpu)); }
  void store_to(int cpu) { stalls.store(transfer_from(p, cpu)); }
  // A store to a line this path has loaded already: charged as store_to()
  // (the invalidation of the copy the load left), but an upgrade, which
  // fetches no data.
  void store_to_loaded(int cpu) { stalls.store(transfer_from(p, cpu, 0)); }
  // Independent loads issued together overlap: the step costs the dearest
  // of the transfers read() and from() give.
  int64_t read(CacheLine& line) { return line.read(machine(), p.cpu()); }
  int64_t from(int cpu, int64_t fetched = 1) { return transfer_from(p, cpu, fetched); }
  void load_step(std::initializer_list<int64_t> transfers) { stalls.load(std::max(transfers)); }
  // `lines` lines of one object reached through one pointer, read or
  // written in a run (a copy, a memset), whose copies `cpu` holds: the
  // line fill buffers take refill_mlp at a time, so the run waits for all
  // batches but the last, whose loads it waits for too and whose stores it
  // leaves in the store buffer.
  void load_run_from(int cpu, int64_t lines) { stalls.load(batches(lines) * transfer_from(p, cpu, lines)); }
  void store_run_to(int cpu, int64_t lines) {
    const int64_t transfer = transfer_from(p, cpu, lines);
    stalls.load((batches(lines) - 1) * transfer);
    stalls.store(transfer);
  }
  // A run of stores to `n` lines of `lines` from `first`, whose copies may
  // sit on different CPUs (2.4's one pipe page): as store_run_to(), at the
  // dearest of their transfers.
  void store_run(std::vector<CacheLine>& lines, int64_t first, int64_t n) {
    int64_t dearest = 0;
    for (int64_t i = first; i < first + n; ++i)
      dearest = std::max(dearest, lines[static_cast<size_t>(i)].write(machine(), p.cpu()));
    stalls.load((batches(n) - 1) * dearest);
    stalls.store(dearest);
  }
  int64_t batches(int64_t lines) const {
    const int64_t mlp = p.costs().refill_mlp;
    return std::max<int64_t>(1, (lines + mlp - 1) / mlp);
  }
  int64_t take_stall() { return stalls.take_stall(); }
};
// A spinlock taken for `hold` (the lines moved while it is held), after
// waiting for the holder.
[[nodiscard]] Charge charge_locked(Proc& p, SpinResource& lock, int64_t hold) {
  const int64_t spin = lock.acquire(p.now(), hold);
  return charge(p, spin + hold);
}
// ---------------------------------------------------------------- pipes --

// The pipe_lines switch on 4.0. struct pipe_inode_info of v4.0 begins with the
// mutex and the wait queue head, one line; nrbufs, curbuf, tmp_page and
// waiting_writers fill the next; each pipe_buffer slot counts as a line.
CacheLine& pipe_entry_of(Pipe& pipe, const kernel::Task* t) { return pipe.wait_entry_lines[t]; }
CacheLine& pipe_entry(Proc& p, Pipe& pipe) { return pipe_entry_of(pipe, p.task()); }
int pipe_slot(const Pipe& pipe, size_t index) {
  return static_cast<int>((static_cast<size_t>(pipe.curbuf_slot) + index) % pipe.buf_lines.size());
}
// __wake_up_common() with the switches' lines: the queue's lock; each
// sleeper's entry loaded (flags, func, the next pointer); the pi_lock of
// try_to_wake_up() waits for the store buffer; then
// autoremove_wake_function()'s list_del_init() of each entry and the
// unlock, plain stores. A waiter woken before is unlinked already.
using EntryLines = std::unordered_map<const kernel::Task*, CacheLine>;
std::vector<const kernel::Task*> sleepers_on(const WaitQueue& wq) {
  std::vector<const kernel::Task*> sleepers;
  for (const auto& w : wq.waiters)
    if (w.task->state == kernel::TaskState::Interruptible) sleepers.push_back(w.task);
  return sleepers;
}
Co<void> wake_up_lines(Proc& p, LinePath& path, WaitQueue& wq, CacheLine& lock_line, EntryLines& entries,
                       int wake_flags) {
  const auto sleepers = sleepers_on(wq);
  path.locked(lock_line);
  for (const kernel::Task* t : sleepers) path.load(entries[t]);
  path.barrier();
  co_await charge(p, path.take_stall());
  co_await p.wake_up(wq, 1, wake_flags);
  for (const kernel::Task* t : sleepers) path.store(entries[t]);
  path.store(lock_line);
}
// wake_up_interruptible_sync_poll(&pipe->wait): the queue's lock is on the
// mutex's line.
// The path itself, not a coroutine around it: one frame fewer a wakeup.
Co<void> pipe_wake_up(Proc& p, LinePath& path, Pipe& pipe) {
  if (pipe.charge_lines)
    return wake_up_lines(p, path, pipe.wait, pipe.mutex_wait_line, pipe.wait_entry_lines, WF_SYNC);
  return p.wake_up(pipe.wait, 1, WF_SYNC);
}
// pipe_wait() with pipe_lines. Before the sleep: DEFINE_WAIT() stores the
// on-stack entry (its last waker unlinked it), prepare_to_wait() takes the
// queue's lock and links it, and pipe_unlock() releases the mutex, both
// locked; they are charged before the sleep, and a pipe that became ready
// meanwhile (`ready`) is seen, as the kernel's waker would have found the
// entry linked. After it: finish_wait() loads the entry the waker unlinked
// (or unlinks it under the queue's lock when no wakeup came), and
// pipe_lock() takes the mutex again.
Co<void> pipe_wait_lines(Proc& p, LinePath& path, Pipe& pipe, const char* caller,
                         const std::function<bool()>& ready) {
  path.store(pipe_entry(p, pipe));
  path.locked(pipe.mutex_wait_line);
  path.store(pipe_entry(p, pipe));
  path.locked(pipe.mutex_wait_line);
  co_await charge(p, path.take_stall());
  const bool sleeps = !ready();
  if (sleeps) co_await pipe_wait(p, pipe.wait, caller);
  path.load(pipe_entry(p, pipe));
  if (!sleeps) {
    path.locked(pipe.mutex_wait_line);
    path.store(pipe_entry(p, pipe));
  }
  path.locked(pipe.mutex_wait_line);
  co_await charge(p, path.take_stall());
}

// The system call's entry, then pipe->mutex, reserved for `hold` (waiting
// behind the current holder's reservation), and the hold itself. Like
// charge(), an awaitable awaited where it is made.
[[nodiscard]] Proc::Primitive pipe_syscall(Proc& p, Pipe& pipe, int64_t hold) {
  return p.syscall(p.costs().syscall_entry + pipe.mutex.acquire(p.now(), hold) + hold);
}

// After a write's wakeups: an smp_mb(), which waits for their stores, then
// the path's stalls.
[[nodiscard]] Charge pipe_write_barrier(Proc& p, Pipe& pipe, LinePath& path) {
  if (pipe.charge_lines) path.barrier();
  return charge(p, path.take_stall());
}

// pipe_write()'s merge of a small write into the last buffer (4.0's and
// 5.5's alike: anon pipe buffers can merge while the page has room), with
// the slot's line. Returns whether it merged.
bool pipe_merge_into_last(Proc& p, LinePath& path, Pipe& pipe, int64_t chars) {
  if (pipe.bufs.empty() || chars == 0) return false;
  Pipe::Buffer& last = pipe.bufs.back();
  CacheLine& last_slot = pipe.buf_lines[pipe_slot(pipe, pipe.bufs.size() - 1)];
  if (pipe.charge_lines) path.load(last_slot);  // ops, offset, len
  if (last.offset + last.len + chars > PAGE_SIZE) return false;
  last.len += chars;
  last.writer_cpu = p.cpu();
  if (pipe.charge_lines) path.store(last_slot);
  return true;
}
// pipe_read()'s take of `chars` bytes from the buffer at the front, whose
// slot the caller has loaded: the slot's store, and when the buffer is
// spent its release (anon_pipe_buf_release() keeps the page as tmp_page
// when there is none, and frees it otherwise) and the tail's move, on 5.5
// under rd_wait's lock. Returns whether the buffer was spent.
bool pipe_take_from_front(Proc& p, LinePath& path, Pipe& pipe, int64_t chars) {
  Pipe::Buffer& buf = pipe.bufs.front();
  buf.offset += chars;
  buf.len -= chars;
  if (pipe.charge_lines) path.store(pipe.buf_lines[static_cast<size_t>(pipe.curbuf_slot)]);
  if (buf.len != 0) return false;
  pipe.bufs.pop_front();
  if (pipe.charge_lines) {
    if (pipe.v55) path.locked(pipe.mutex_wait_line);
    path.store(pipe.info_line);
    if (pipe.tmp_page_reader_cpu < 0) pipe.tmp_page_reader_cpu = p.cpu();
    pipe.curbuf_slot = pipe_slot(pipe, 1);
  }
  return true;
}

// __pipe_lock() and __pipe_unlock() (fs/pipe.c) with pipe_lines: the
// mutex's locked operation on its line (mutex_lock()'s locked decrement;
// mutex_unlock()'s locked increment, which drains the stores before it).
void pipe_lock(Pipe& pipe, LinePath& path) {
  if (pipe.charge_lines) path.locked(pipe.mutex_wait_line);
}
void pipe_unlock(Pipe& pipe, LinePath& path) {
  if (pipe.charge_lines) path.locked(pipe.mutex_wait_line);
}
// __pipe_lock(), then the loads of the state every turn starts from:
// pipe->readers with the ring's head and tail (4.0: nrbufs, curbuf).
void pipe_lock_and_load_state(Pipe& pipe, LinePath& path) {
  pipe_lock(pipe, path);
  if (pipe.charge_lines) path.load(pipe.info_line);
}

// fs/pipe.c (v4.0) pipe_write()
Co<int64_t> pipe_write40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), total_len);
  co_await pipe_syscall(p, pipe, hold);
  int64_t ret = 0;
  bool do_wakeup = false;
  LinePath path(p);
  pipe_lock_and_load_state(pipe, path);
  const int64_t chars = total_len & (PAGE_SIZE - 1);
  if (pipe_merge_into_last(p, path, pipe, chars)) {
    do_wakeup = true;
    ret = chars;
  }
  while (ret < total_len) {
    if (static_cast<int>(pipe.bufs.size()) < pipe.max_buffers) {
      const int64_t copied = std::min(PAGE_SIZE, total_len - ret);
      if (pipe.charge_lines) {
        // The copy into pipe->tmp_page, the page the reader released last,
        // whose lines it read (a page from alloc_page() when there is none:
        // this CPU's, free); the new slot; nrbufs and tmp_page.
        path.store_run_to(pipe.tmp_page_reader_cpu, (copied + 63) / 64);
        pipe.tmp_page_reader_cpu = -1;
        path.store(pipe.buf_lines[pipe_slot(pipe, pipe.bufs.size())]);
        path.store(pipe.info_line);
      }
      pipe.bufs.push_back({0, copied, p.cpu()});
      do_wakeup = true;
      ret += copied;
      continue;
    }
    // Ring full: wake readers before sleeping.
    if (do_wakeup) {
      co_await pipe_wake_up(p, path, pipe);
      do_wakeup = false;
    }
    pipe.waiting_writers++;
    if (pipe.charge_lines) {
      path.store(pipe.info_line);
      // Named: GCC 12 destroys class-type temporaries of a co_await
      // expression twice (kernel/kernel.hpp, Proc::fork()).
      const std::function<bool()> room = [&pipe] { return static_cast<int>(pipe.bufs.size()) < pipe.max_buffers; };
      co_await pipe_wait_lines(p, path, pipe, "pipe_write", room);
      path.store(pipe.info_line);
    } else {
      co_await pipe_wait(p, pipe.wait, "pipe_write");
    }
    pipe.waiting_writers--;
  }
  pipe_unlock(pipe, path);
  if (do_wakeup) co_await pipe_wake_up(p, path, pipe);
  // Then sb_start_write_trylock() and, in vfs_write(), fsnotify_modify()'s
  // srcu_read_lock().
  co_await pipe_write_barrier(p, pipe, path);
  co_return ret;
}

// fs/pipe.c (v4.0) pipe_read()
Co<int64_t> pipe_read40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  co_await pipe_syscall(p, pipe, c.pipe_read_base);
  int64_t ret = 0;
  bool do_wakeup = false;
  // nrbufs and curbuf are loaded at each turn.
  LinePath path(p);
  pipe_lock(pipe, path);
  for (;;) {
    if (pipe.charge_lines) path.load(pipe.info_line);
    if (!pipe.bufs.empty()) {
      Pipe::Buffer& buf = pipe.bufs.front();
      CacheLine& slot = pipe.buf_lines[static_cast<size_t>(pipe.curbuf_slot)];
      const int64_t chars = std::min(buf.len, total_len);
      if (pipe.charge_lines) {
        // The slot at curbuf: ops, len, offset, page.
        path.load(slot);
        co_await charge(p, path.take_stall());
      }
      co_await p.sys(copy_cost(p, buf.writer_cpu, chars));
      ret += chars;
      if (pipe_take_from_front(p, path, pipe, chars)) do_wakeup = true;
      total_len -= chars;
      if (total_len == 0) break;
      if (!pipe.bufs.empty()) continue;
    }
    if (!pipe.writers) break;
    if (!pipe.waiting_writers && ret) break;
    if (do_wakeup) co_await pipe_wake_up(p, path, pipe);
    if (pipe.charge_lines) {
      const std::function<bool()> readable = [&pipe] { return !pipe.bufs.empty() || !pipe.writers; };
      co_await pipe_wait_lines(p, path, pipe, "pipe_read", readable);
    } else {
      co_await pipe_wait(p, pipe.wait, "pipe_read");
    }
  }
  pipe_unlock(pipe, path);
  if (do_wakeup) co_await pipe_wake_up(p, path, pipe);
  co_await charge(p, path.take_stall());
  co_return ret;
}

// ---- PIPE_V55: fs/pipe.c of v5.5 to 6.x (read from v5.15) ----
// Linus Torvalds' 2019 rewrite (1b6b26ae7053 and its series): the reader
// waits exclusively on rd_wait and is woken only by a write that found the
// pipe empty; writers wait exclusively on wr_wait and a read wakes one
// whenever the pipe was full when the read began, whether or not it freed
// a page (fixed in 2025: "pipe_read: don't wake up the writer if the pipe
// is still full"), so while a pipe stays full nearly every read wakes a
// writer that finds it still full and sleeps again. The pipe's mutex is
// the time reservation 4.0's path uses, and is not re-taken after a sleep.

// A queue's list head: rd_wait's is on the mutex's line with its lock;
// wr_wait's lock is there too (offset 56) but its head (64-79) is on the
// next line, with head, tail, readers and writers (info_line).
CacheLine& pipe_queue_head_line55(Pipe& pipe, const WaitQueue& wq) {
  return &wq == &pipe.wr_wait ? pipe.info_line : pipe.mutex_wait_line;
}
// wake_up_interruptible_sync_poll(): the lock, then __wake_up_common()
// walks the entries, waking every non-exclusive one (poll()'s) and
// stopping after the first exclusive one, which it unlinks (autoremove),
// writing the list head.
Co<void> pipe_wake_up55(Proc& p, LinePath& path, Pipe& pipe, WaitQueue& wq) {
  if (!pipe.charge_lines) {
    co_await p.wake_up(wq, 1, WF_SYNC);
    co_return;
  }
  std::vector<const kernel::Task*> walked;
  for (const auto& w : wq.waiters) {
    if (w.task->state != kernel::TaskState::Interruptible) continue;
    walked.push_back(w.task);
    if (w.exclusive) break;
  }
  path.locked(pipe.mutex_wait_line);
  for (const kernel::Task* t : walked) path.load(pipe_entry_of(pipe, t));
  path.barrier();
  co_await charge(p, path.take_stall());
  co_await p.wake_up(wq, 1, WF_SYNC);
  for (const kernel::Task* t : walked) path.store(pipe_entry_of(pipe, t));
  if (!walked.empty()) path.store(pipe_queue_head_line55(pipe, wq));
  path.store(pipe.mutex_wait_line);
}
// wait_event_interruptible_exclusive(wq, ready()), called with the mutex
// dropped: the condition first (no wait if it holds); then each turn
// prepare_to_wait_event() links the entry at the tail under the queue's
// lock (writing the list head), the condition is checked again and the
// task sleeps; a waker unlinks it (autoremove), so a woken task that finds
// the condition false links it again. finish_wait() at the end.
Co<void> pipe_wait_event55(Proc& p, LinePath& path, Pipe& pipe, WaitQueue& wq, const char* caller,
                           const std::function<bool()>& ready) {
  if (ready()) co_return;
  CacheLine& head = pipe_queue_head_line55(pipe, wq);
  for (;;) {
    if (pipe.charge_lines) {
      path.store(pipe_entry(p, pipe));
      path.locked(pipe.mutex_wait_line);
      path.store(pipe_entry(p, pipe));
      path.store(head);
      co_await charge(p, path.take_stall());
    }
    if (ready()) break;
    co_await pipe_wait(p, wq, caller, true);
    if (pipe.charge_lines) path.load(pipe_entry(p, pipe));
  }
  if (pipe.charge_lines) {
    path.locked(pipe.mutex_wait_line);
    path.store(pipe_entry(p, pipe));
  }
}
bool pipe_full55(const Pipe& pipe) { return static_cast<int>(pipe.bufs.size()) >= pipe.max_buffers; }

// fs/pipe.c (v5.15) pipe_write()
Co<int64_t> pipe_write55(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), total_len);
  co_await pipe_syscall(p, pipe, hold);
  int64_t ret = 0;
  bool wake_next_writer = false;
  LinePath path(p);
  pipe_lock_and_load_state(pipe, path);
  bool was_empty = pipe.bufs.empty();
  // "If it wasn't empty we try to merge new data into the last buffer."
  const int64_t chars = total_len & (PAGE_SIZE - 1);
  if (pipe_merge_into_last(p, path, pipe, chars)) ret = chars;
  while (ret < total_len) {
    if (!pipe_full55(pipe)) {
      const int64_t copied = std::min(PAGE_SIZE, total_len - ret);
      if (pipe.charge_lines) {
        // spin_lock_irq(&pipe->rd_wait.lock) around head++; the slot; the
        // copy into pipe->tmp_page, the page the reader released last.
        path.locked(pipe.mutex_wait_line);
        path.store(pipe.info_line);
        path.store(pipe.buf_lines[pipe_slot(pipe, pipe.bufs.size())]);
        path.store_run_to(pipe.tmp_page_reader_cpu, (copied + 63) / 64);
        pipe.tmp_page_reader_cpu = -1;
      }
      pipe.bufs.push_back({0, copied, p.cpu()});
      ret += copied;
      continue;
    }
    // Full: drop the lock, wake the reader if the pipe was empty when this
    // writer last looked, wait for room, and look again.
    pipe_unlock(pipe, path);
    if (was_empty) co_await pipe_wake_up55(p, path, pipe, pipe.rd_wait);
    const std::function<bool()> writable = [&pipe] { return !pipe_full55(pipe) || !pipe.readers; };
    co_await pipe_wait_event55(p, path, pipe, pipe.wr_wait, "pipe_write", writable);
    pipe_lock_and_load_state(pipe, path);
    was_empty = pipe.bufs.empty();
    wake_next_writer = true;
  }
  if (pipe_full55(pipe)) wake_next_writer = false;
  pipe_unlock(pipe, path);
  // "Epoll nonsensically wants a wakeup whether the pipe was already empty
  // or not."
  if (was_empty || pipe.poll_usage) co_await pipe_wake_up55(p, path, pipe, pipe.rd_wait);
  if (wake_next_writer) co_await pipe_wake_up55(p, path, pipe, pipe.wr_wait);
  // sb_start_write_trylock() and file_update_time().
  co_await pipe_write_barrier(p, pipe, path);
  co_return ret;
}

// fs/pipe.c (v5.15) pipe_read(). The mutex here is a time reservation,
// not an exclusion, and v5.5's wakeups rely on the exclusion: a read that
// began with the pipe not full must not see a writer fill it before its
// own state change, or that writer sleeps unwoken. So everything the
// mutex covers (was_full, the reads, tail) happens at one instant after the
// reservation, and the copy and the lines' stalls are charged after it,
// before the unlock's wakeups, as the kernel copies before it unlocks.
Co<int64_t> pipe_read55(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  co_await pipe_syscall(p, pipe, c.pipe_read_base);
  int64_t ret = 0;
  int64_t copy_ns = 0;
  bool wake_next_reader = false;
  LinePath path(p);
  pipe_lock_and_load_state(pipe, path);
  // "We only wake up writers if the pipe was full when we started reading"
  bool was_full = pipe_full55(pipe);
  for (;;) {
    if (pipe.charge_lines) path.load(pipe.info_line);  // smp_load_acquire(&pipe->head), tail
    if (!pipe.bufs.empty()) {
      Pipe::Buffer& buf = pipe.bufs.front();
      CacheLine& slot = pipe.buf_lines[static_cast<size_t>(pipe.curbuf_slot)];
      const int64_t chars = std::min(buf.len, total_len);
      if (pipe.charge_lines) path.load(slot);
      copy_ns += copy_cost(p, buf.writer_cpu, chars);
      ret += chars;
      pipe_take_from_front(p, path, pipe, chars);
      total_len -= chars;
      if (total_len == 0) break;
      if (!pipe.bufs.empty()) continue;
    }
    if (!pipe.writers) break;
    if (ret) break;
    pipe_unlock(pipe, path);
    if (was_full) co_await pipe_wake_up55(p, path, pipe, pipe.wr_wait);
    const std::function<bool()> readable = [&pipe] { return !pipe.bufs.empty() || !pipe.writers; };
    co_await pipe_wait_event55(p, path, pipe, pipe.rd_wait, "pipe_read", readable);
    pipe_lock_and_load_state(pipe, path);
    was_full = pipe_full55(pipe);
    wake_next_reader = true;
  }
  if (pipe.bufs.empty()) wake_next_reader = false;
  co_await p.sys(copy_ns);
  pipe_unlock(pipe, path);
  if (was_full) co_await pipe_wake_up55(p, path, pipe, pipe.wr_wait);
  if (wake_next_reader) co_await pipe_wake_up55(p, path, pipe, pipe.rd_wait);
  co_await charge(p, path.take_stall());
  co_return ret;
}

// ---- the line switches on 2.4 ----
// A wait queue of 2.4.19 (include/linux/wait.h, kernel/fork.c,
// kernel/sched.c): its lock's line and its list head's, and the sleepers'
// on-stack entries. The lock is a spinlock (USE_RW_WAIT_QUEUE_SPINLOCK is
// 0), whose unlock is a plain store.
struct WaitLines24 {
  WaitQueue& wq;
  CacheLine& lock;
  CacheLine& head;
  EntryLines& entries;
};
// __wake_up(): the queue's lock, taken whether anyone waits or not; every
// linked entry loaded (task, next), woken ones too, since each stays
// linked until its own remove_wait_queue(); try_to_wake_up()'s
// spin_lock_irqsave(&runqueue_lock) drains the store buffer; the waker
// stores nothing in the entries.
Co<void> wake_up_lines24(Proc& p, LinePath& path, WaitLines24 q, int wake_flags) {
  path.locked(q.lock);
  path.load(q.head);
  bool sleeper = false;
  for (const auto& w : q.wq.waiters) {
    path.load(q.entries[w.task]);
    sleeper = sleeper || w.task->state == kernel::TaskState::Interruptible;
  }
  if (sleeper) path.barrier();
  co_await charge(p, path.take_stall());
  co_await p.wake_up(q.wq, 1, wake_flags);
  path.store(q.lock);
}
// DECLARE_WAITQUEUE() and add_wait_queue(): the entry's flags cleared,
// then under the lock list_add() at the head (head->next; the newest
// linked entry's prev, or the head's own; head->next).
void add_wait_queue_lines24(Proc& p, LinePath& path, WaitLines24 q) {
  path.store(q.entries[p.task()]);
  path.locked(q.lock);
  path.load(q.head);
  path.store(q.wq.waiters.empty() ? q.head : q.entries[q.wq.waiters.front().task]);
  path.store(q.head);
  path.store(q.lock);
}
// remove_wait_queue() by the sleeper itself, woken or not: under the lock,
// list_del() loads its entry and stores its neighbours' links; they are
// charged as the head's line and, when others are still linked, the newest
// of them (the entry's own place is gone once wait_event() has unlinked it).
void remove_wait_queue_lines24(Proc& p, LinePath& path, WaitLines24 q) {
  path.locked(q.lock);
  path.load(q.entries[p.task()]);
  path.store(q.head);
  if (!q.wq.waiters.empty()) path.store(q.entries[q.wq.waiters.front().task]);
  path.store(q.lock);
}
// sys_read()/sys_write() of 2.4.19 around the file operation: fget()'s
// atomic_inc(&file->f_count) before it; after it, when data moved,
// dnotify_parent(), which takes the kernel-wide dcache_lock (a locked
// decb, held for loads of read-only lines: the dentry's parent, its
// inode's dnotify mask) and releases it with a plain store; then fput()'s
// atomic_dec_and_test().
void fget_lines24(LinePath& path, CacheLine& file) { path.locked(file); }
Co<void> fput_lines24(Proc& p, LinePath& path, CacheLine& file, bool moved_data) {
  if (moved_data) {
    auto& shared = p.kernel().shared_lines();
    path.locked(shared.dcache_lock_line);
    co_await charge_locked(p, shared.dcache_lock, path.take_stall());
    path.store(shared.dcache_lock_line);
  }
  path.locked(file);
  co_await charge(p, path.take_stall());
}

// The pipe's wait queue on 2.4: lock and head on the pipe_inode_info line.
WaitLines24 pipe_wait_queue24(Pipe& pipe) { return {pipe.wait, pipe.info_line, pipe.info_line, pipe.wait_entry_lines}; }
Co<void> pipe_wake_up24(Proc& p, LinePath& path, Pipe& pipe, int wake_flags) {
  if (pipe.charge_lines)
    co_await wake_up_lines24(p, path, pipe_wait_queue24(pipe), wake_flags);
  else
    co_await p.wake_up(pipe.wait, 1, wake_flags);
}
// pipe_wait() of 2.4.19 with pipe_lines: add_wait_queue(), up(PIPE_SEM),
// charged before the sleep, and a pipe that became ready meanwhile
// (`ready`) is seen; after it remove_wait_queue() and down().
Co<void> pipe_wait_lines24(Proc& p, LinePath& path, Pipe& pipe, const char* caller,
                           const std::function<bool()>& ready) {
  add_wait_queue_lines24(p, path, pipe_wait_queue24(pipe));
  path.locked(pipe.sem_line);
  co_await charge(p, path.take_stall());
  if (!ready()) co_await pipe_wait(p, pipe.wait, caller);
  remove_wait_queue_lines24(p, path, pipe_wait_queue24(pipe));
  path.locked(pipe.sem_line);
  co_await charge(p, path.take_stall());
}

// The start of a 2.4 pipe read or write with pipe_lines: fget() on the
// end's file, down(PIPE_SEM), then the pipe_inode_info line (readers,
// len).
void pipe_enter_lines24(LinePath& path, Pipe& pipe, CacheLine& file) {
  fget_lines24(path, file);
  path.locked(pipe.sem_line);
  path.load(pipe.info_line);
}

// PIPE_WAITING_WRITERS()++, pipe_wait(), --, and the pipe's state again,
// for a writer that needs `free_needed` bytes of room.
Co<void> pipe_wait_as_writer24(Proc& p, LinePath& path, Pipe& pipe, int64_t free_needed) {
  pipe.waiting_writers++;
  if (pipe.charge_lines) {
    path.store(pipe.info_line);
    // Named: GCC 12 destroys class-type temporaries of a co_await
    // expression twice (kernel/kernel.hpp, Proc::fork()).
    const std::function<bool()> room = [&pipe, free_needed] {
      return PAGE_SIZE - pipe.len24 >= free_needed;
    };
    co_await pipe_wait_lines24(p, path, pipe, "pipe_write", room);
    path.store(pipe.info_line);
    path.load(pipe.info_line);
  } else {
    co_await pipe_wait(p, pipe.wait, "pipe_write");
  }
  pipe.waiting_writers--;
}

// fs/pipe.c (2.4.19) pipe_write(): one page; a write <= PIPE_BUF needs room
// for all of it; the end-of-call wakeup is asynchronous and comes before
// up(PIPE_SEM). With pipe_lines: down() on the semaphore's line; readers,
// len, base and start on the pipe_inode_info line; each chunk's page lines
// (PIPE_MAX_WCHUNK: up to the page's end); after the wakeup the stores of
// i_ctime and i_mtime, on the semaphore's line; up(); dnotify_parent().
Co<int64_t> pipe_write24(Proc& p, Pipe& pipe, int64_t count) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), count);
  co_await pipe_syscall(p, pipe, hold);
  const bool lines = pipe.charge_lines;
  LinePath path(p);
  if (lines) pipe_enter_lines24(path, pipe, pipe.write_file_line);
  const int64_t free_needed = count <= PAGE_SIZE ? count : 1;
  while (PAGE_SIZE - pipe.len24 < free_needed) co_await pipe_wait_as_writer24(p, path, pipe, free_needed);
  int64_t written = 0;
  while (count > 0) {
    const int64_t space = PAGE_SIZE - pipe.len24;
    if (space) {
      const int64_t end = (pipe.start24 + pipe.len24) & (PAGE_SIZE - 1);
      const int64_t chars = std::min({count, space, PAGE_SIZE - end});
      if (lines) {
        path.load(pipe.info_line);
        path.store_run(pipe.page_lines24, end / 64, (end + chars + 63) / 64 - end / 64);
        path.store(pipe.info_line);
      }
      pipe.len24 += chars;
      pipe.writer_cpu24 = p.cpu();
      written += chars;
      count -= chars;
      continue;
    }
    do {
      co_await pipe_wake_up24(p, path, pipe, WF_SYNC);  // the writer is about to sleep
      co_await pipe_wait_as_writer24(p, path, pipe, 1);
    } while (PAGE_SIZE - pipe.len24 == 0);
  }
  co_await pipe_wake_up24(p, path, pipe, 0);
  if (lines) {
    path.store(pipe.sem_line);
    path.locked(pipe.sem_line);
    co_await fput_lines24(p, path, pipe.write_file_line, written > 0);
  }
  co_return written;
}

// fs/pipe.c (2.4.19) pipe_read(): up to two chunks (PIPE_MAX_RCHUNK: up to
// the page's end); an emptied pipe starts again at the page's beginning
// (the "cache behaviour optimization"). With pipe_lines: down(); len,
// base and start; the data's loads stay with the copy, and the page's
// lines only record the copies they leave (and count the lines the copy
// moved, each from its own writer); the wakeup before up(); then
// UPDATE_ATIME()'s load of i_atime on the semaphore's line, and
// dnotify_parent().
Co<int64_t> pipe_read24(Proc& p, Pipe& pipe, int64_t count) {
  const auto& c = p.costs();
  co_await pipe_syscall(p, pipe, c.pipe_read_base);
  const bool lines = pipe.charge_lines;
  LinePath path(p);
  if (lines) pipe_enter_lines24(path, pipe, pipe.read_file_line);
  const std::function<bool()> readable = [&pipe] { return pipe.len24 > 0 || !pipe.writers; };
  int64_t read = 0;
  for (;;) {
    while (pipe.len24 == 0 && pipe.writers) {
      if (lines) {
        path.store(pipe.info_line);
        co_await pipe_wait_lines24(p, path, pipe, "pipe_read", readable);
        path.store(pipe.info_line);
        path.load(pipe.info_line);
      } else {
        co_await pipe_wait(p, pipe.wait, "pipe_read");
      }
    }
    if (pipe.len24 == 0) break;  // no writers: `goto out`, no wakeup
    while (count > 0 && pipe.len24 > 0) {
      // The chunk ends at the page's end with the line switch (where the
      // page's lines are tracked); without it one copy, as before stop 34.
      const int64_t chars =
          std::min({count, pipe.len24, lines ? PAGE_SIZE - pipe.start24 : PAGE_SIZE});
      if (lines) {
        path.load(pipe.info_line);
        co_await charge(p, path.take_stall());
      }
      co_await p.sys(copy_cost(p, pipe.writer_cpu24, chars, !lines));
      if (lines)
        for (int64_t i = pipe.start24 / 64; i <= (pipe.start24 + chars - 1) / 64; ++i)
          (void)pipe.page_lines24[static_cast<size_t>(i)].read(p.kernel().machine(), p.cpu());
      pipe.start24 = (pipe.start24 + chars) & (PAGE_SIZE - 1);
      pipe.len24 -= chars;
      read += chars;
      count -= chars;
      if (lines) path.store(pipe.info_line);
    }
    if (pipe.len24 == 0) pipe.start24 = 0;
    if (count && pipe.waiting_writers) {
      co_await pipe_wake_up24(p, path, pipe, WF_SYNC);  // "we know we are going to sleep"
      continue;
    }
    co_await pipe_wake_up24(p, path, pipe, 0);
    break;
  }
  if (lines) {
    path.locked(pipe.sem_line);
    path.load(pipe.sem_line);
    co_await fput_lines24(p, path, pipe.read_file_line, read > 0);
  }
  co_return read;
}

// ---------------------------------------------------------- AF_UNIX ----

constexpr int64_t SK_BUFF_LINES = 4;  // struct sk_buff of v4.0: 232 bytes

// unix_stream_sendmsg()'s skb size for `left` bytes still to send.
bool sndbuf_has_room(const UnixSock& sk) { return sk.wmem_alloc - sk.wmem_bias < sk.sndbuf; }
// skb_queue_tail()'s store of the old tail skb's next pointer, with the
// line switch.
void store_tail_link(Proc& p, LinePath& path, UnixSock& other) {
  if (other.receive_queue.empty()) return;
  UnixSock::Skb& tail = other.receive_queue.back();
  path.store_to(tail.link_line_cpu);
  tail.link_line_cpu = p.cpu();
}
// The skb on the receiver's queue, written here by the sender.
void queue_skb(Proc& p, UnixSock& sk, UnixSock& other, int64_t size, int64_t truesize) {
  other.receive_queue.push_back({size, 0, truesize, p.cpu(), &sk, p.cpu(), p.cpu(), false, false});
}
// The receive's copy out of the skb at the queue's front: up to `size`
// bytes of what is left of it, from the sender's lines. Returns the bytes.
Co<int64_t> copy_skb_chunk(Proc& p, UnixSock::Skb& skb, int64_t size) {
  const int64_t chunk = std::min(skb.len - skb.consumed, size);
  co_await p.sys(copy_cost(p, skb.writer_cpu, chunk));
  skb.consumed += chunk;
  co_return chunk;
}
// sock_alloc_send_pskb() (4.0) and sock_alloc_send_skb() (2.4) on a full
// send buffer, with the line switch: set_bit(SOCK_ASYNC_NOSPACE) and
// set_bit(SOCK_NOSPACE) on the socket's flags, two locked operations,
// before the wait.
void set_nospace_bits(LinePath& path, UnixSock& sk) {
  path.locked(sk.socket_flags_line);
  path.locked(sk.socket_flags_line);
}
// sock_alloc_send_pskb()'s wait, without the line switch. A send buffer
// with room returns at once, without making the wait's coroutine (a send
// seldom waits).
Co<void> wait_for_sndbuf_slow(Proc& p, UnixSock& sk) {
  co_await p.wait_event(sk.sleep, [&sk] { return sndbuf_has_room(sk); }, "sock_alloc_send_pskb");
}
[[nodiscard]] Step wait_for_sndbuf(Proc& p, UnixSock& sk) {
  if (sndbuf_has_room(sk)) return {};
  return wait_for_sndbuf_slow(p, sk);
}

CacheLine& wait_entry(Proc& p, UnixSock& sk) { return sk.wait_entry_lines[p.task()]; }
// sock_def_readable() and unix_write_space(): wq_has_sleeper() is smp_mb()
// and a load of the queue head; with a sleeper linked, the wakeup (a waiter
// woken before is unlinked, though it leaves the model's queue only when it
// runs).
[[nodiscard]] Step sock_wake_up(Proc& p, LinePath& path, UnixSock& sk) {
  const int wake_flags = WF_SYNC;  // wake_up_interruptible_sync_poll()
  if (!sk.charge_lines) return p.wake_up(sk.sleep, 1, wake_flags);
  path.barrier();
  path.load(sk.wait_queue_line);
  if (!sleepers_on(sk.sleep).empty())
    return wake_up_lines(p, path, sk.sleep, sk.wait_queue_line, sk.wait_entry_lines, wake_flags);
  return charge(p, path.take_stall());
}

// unix_write_space(): wake blocked senders once wmem <= sndbuf/4.
[[nodiscard]] Step unix_write_space(Proc& p, LinePath& path, UnixSock& sk) {
  if ((sk.wmem_alloc << 2) > sk.sndbuf) return {};  // unix_writable()
  if (sk.charge_lines || sk.sleep.active()) return sock_wake_up(p, path, sk);
  return {};
}

// prepare_to_wait() with unix_sock_lines: `wait->flags &=
// ~WQ_FLAG_EXCLUSIVE` on the entry (its last waker unlinked it), the
// queue's lock, which waits for that store, and the entry's linking.
void prepare_to_wait_lines(Proc& p, LinePath& path, UnixSock& sk) {
  path.load(wait_entry(p, sk));
  path.store(wait_entry(p, sk));
  path.locked(sk.wait_queue_line);
  path.store(wait_entry(p, sk));
}
// finish_wait() after a prepare_to_wait() no wakeup followed: the entry,
// unlinked under the queue's lock.
void finish_wait_lines(Proc& p, LinePath& path, UnixSock& sk) {
  path.load(wait_entry(p, sk));
  path.locked(sk.wait_queue_line);
  path.store(wait_entry(p, sk));
}

// sock_wait_for_wmem() (net/core/sock.c) with unix_sock_lines:
// DEFINE_WAIT() and clear_bit(SOCK_ASYNC_NOSPACE) on the socket's flags
// (which all the socket's senders share); before each check set_bit()
// there, prepare_to_wait() and the load of sk_wmem_alloc, charged before
// the check so that the check and the sleep are one step.
Co<void> sock_wait_for_wmem_lines(Proc& p, LinePath& path, UnixSock& sk) {
  path.store(wait_entry(p, sk));
  path.locked(sk.socket_flags_line);
  for (;;) {
    path.locked(sk.socket_flags_line);
    prepare_to_wait_lines(p, path, sk);
    path.load(sk.wmem_line);
    co_await charge(p, path.take_stall());
    if (sndbuf_has_room(sk)) break;
    co_await pipe_wait(p, sk.sleep, "sock_alloc_send_pskb");
  }
  finish_wait_lines(p, path, sk);
}

// unix_stream_data_wait() with unix_sock_lines: DEFINE_WAIT(); under
// unix_state_lock(sk), prepare_to_wait() and skb_peek_tail(), and
// set_bit(SOCK_ASYNC_WAITDATA) before the sleep; after it the lock again
// and clear_bit(). The hold before the sleep is charged before the check,
// so that the check and the sleep are one step (a sender queueing
// meanwhile spins behind it, and is seen).
Co<void> unix_stream_data_wait_lines(Proc& p, LinePath& path, UnixSock& sk) {
  path.store(wait_entry(p, sk));
  path.locked(sk.state_lock_line);
  for (;;) {
    prepare_to_wait_lines(p, path, sk);
    path.load(sk.queue_head_line);
    if (!sk.receive_queue.empty()) break;
    path.locked(sk.socket_flags_line);
    co_await charge_locked(p, sk.state_lock, path.take_stall());
    if (sk.receive_queue.empty()) co_await pipe_wait(p, sk.sleep, "unix_stream_recvmsg");
    path.locked(sk.state_lock_line);
    path.locked(sk.socket_flags_line);
  }
  finish_wait_lines(p, path, sk);
  co_await charge_locked(p, sk.state_lock, path.take_stall());
}

// net/unix/af_unix.c unix_stream_sendmsg() with sock_alloc_send_pskb(),
// called by write(2) through vfs_write().
Co<int64_t> unix_send(Proc& p, UnixSock& sk, int64_t len) {
  const auto& c = p.costs();
  UnixSock& other = *sk.peer;
  int64_t sent = 0;
  co_await p.syscall(c.syscall_entry);
  LinePath path(p);
  while (sent < len) {
    const UnixSkbShape skb = unix_stream_skb(sk, len - sent);
    const int64_t size = skb.size;
    // sock_alloc_send_pskb(): block while the send buffer is used up.
    if (sk.charge_lines) path.load(sk.wmem_line);  // atomic_read(&sk->sk_wmem_alloc)
    if (sk.charge_lines && !sndbuf_has_room(sk)) {
      set_nospace_bits(path, sk);
      co_await sock_wait_for_wmem_lines(p, path, sk);
    } else {
      co_await wait_for_sndbuf(p, sk);
    }
    // alloc_skb(GFP_KERNEL) may sleep: with CONFIG_PREEMPT_VOLUNTARY its
    // might_sleep() is a preemption point between the sndbuf check above and
    // skb_set_owner_w() below, and a sender preempted there charges its skb
    // without checking again, so the senders sharing a write end can
    // overshoot sk_sndbuf by one skb each (2.4 has no such point:
    // unix_send24()). The work of the call follows the charge; no point
    // follows until the return to user mode.
    co_await p.sys_after_might_sleep(0);
    const int64_t truesize = skb.truesize;
    sk.wmem_alloc += truesize;  // skb_set_owner_w(), before the copy
    if (sk.charge_lines) {
      // __alloc_skb(): the two slab allocations load the free pointer in
      // the sk_buff and in the data (the CPU that freed them wrote it), and
      // ksize(data) the data's slab page, which that CPU's remote free
      // wrote: independent, one step. Then the memset() of the sk_buff
      // and the shared info; skb_set_owner_w()'s locked add to
      // sk_wmem_alloc waits for those stores; skb_copy_datagram_from_iter()
      // stores the data.
      // The two free pointers' lines are among those the stores below
      // fetch, and counted there.
      path.load_step({path.from(sk.skb_freed_on, 0), path.read(sk.data_page_line)});
      path.store_run_to(sk.skb_freed_on, SK_BUFF_LINES + 1);
      path.locked(sk.wmem_line);
      path.store_run_to(sk.skb_freed_on, (size + 63) / 64);
    }
    // The call's work after its wakeup (unix_send_tail) comes after
    // sk_data_ready(), below.
    const bool last = sent + size >= len;
    const int64_t head = c.unix_send_base - (last ? c.unix_send_tail : 0);
    co_await p.sys(head + path.take_stall() + copy_cost(p, p.cpu(), size));
    if (other.charge_lines) {
      // unix_state_lock(other), which waits for the data's stores;
      // maybe_add_creds() loads the receiver's socket flags;
      // skb_queue_tail() takes the queue's own lock (on the queue head's
      // line) and stores the old tail skb's next pointer; the skb is
      // queued before the unlocks.
      path.locked(other.state_lock_line);
      path.load(other.socket_flags_line);
      path.locked(other.queue_head_line);
      store_tail_link(p, path, other);
      co_await charge_locked(p, other.state_lock, path.take_stall());
    }
    queue_skb(p, sk, other, size, truesize);
    // other->sk_data_ready(): sock_def_readable()
    co_await sock_wake_up(p, path, other);
    sent += size;
  }
  // After the last wakeup and its own rest (ttwu_tail, charged by
  // Kernel::ttwu_finish(); the profiles take it out of the measured tail):
  // the rest of the wait queue's walk, sock_def_readable(),
  // unix_stream_sendmsg() and vfs_write() (fsnotify_modify()), up to the
  // system call's exit work. A wakee that
  // preempts waits for it, and the fair class charges it to the wakee (the
  // clock skip: Kernel::update_rq_clock()).
  if (c.unix_send_tail > 0) co_await p.sys(c.unix_send_tail);
  // vfs_write()'s fsnotify_modify(): srcu_read_lock()'s smp_mb() waits for
  // the wakeup's stores.
  if (sk.charge_lines) path.barrier();
  co_await charge(p, path.take_stall());
  co_return sent;
}

// net/unix/af_unix.c unix_stream_recvmsg()
Co<int64_t> unix_recv(Proc& p, UnixSock& sk, int64_t size) {
  const auto& c = p.costs();
  int64_t copied = 0;
  co_await p.syscall(c.syscall_entry + c.unix_recv_base);
  LinePath path(p);
  if (sk.charge_lines) path.locked(sk.readlock_line);  // mutex_lock_interruptible(&u->readlock)
  while (size > 0) {
    if (sk.charge_lines) {
      // unix_state_lock(sk); skb_peek(), and unix_skb_len() of the skb
      // found (skb->len and UNIXCB(skb).consumed, on its line 1).
      path.locked(sk.state_lock_line);
      path.load(sk.queue_head_line);
      if (!sk.receive_queue.empty() && !sk.receive_queue.front().len_line_read) {
        path.load_from(sk.receive_queue.front().len_line_cpu);
        sk.receive_queue.front().len_line_read = true;
      }
      co_await charge_locked(p, sk.state_lock, path.take_stall());
    }
    if (sk.receive_queue.empty()) {
      if (copied >= 1) break;
      if (sk.charge_lines) {
        path.locked(sk.readlock_line);  // mutex_unlock() before the wait
        co_await unix_stream_data_wait_lines(p, path, sk);
      } else {
        co_await p.wait_event(sk.sleep, [&sk] { return !sk.receive_queue.empty(); }, "unix_stream_recvmsg");
      }
      // mutex_lock_interruptible(&u->readlock) starts with might_sleep(), a
      // _cond_resched() under CONFIG_PREEMPT_VOLUNTARY: a woken receiver
      // gives way here to a task that asked for its CPU since the switch.
      co_await p.sys_after_might_sleep(0);
      if (sk.charge_lines) path.locked(sk.readlock_line);
      continue;
    }
    UnixSock::Skb& skb = sk.receive_queue.front();
    if (sk.charge_lines && !skb.rest_read) {
      // Line 1 (if the skb was queued while this CPU held the lock) and
      // the other three lines, which skb_copy_datagram_msg() and the free
      // read.
      if (!skb.len_line_read) path.load_from(skb.len_line_cpu);
      path.load_run_from(skb.writer_cpu, SK_BUFF_LINES - 1);
      skb.len_line_read = skb.rest_read = true;
      co_await charge(p, path.take_stall());
    }
    const int64_t chunk = co_await copy_skb_chunk(p, skb, size);
    copied += chunk;
    size -= chunk;
    if (sk.charge_lines) {
      // UNIXCB(skb).consumed += chunk, on line 1, loaded above.
      path.store_to_loaded(skb.len_line_cpu);
      skb.len_line_cpu = p.cpu();
    }
    if (skb.consumed < skb.len) break;
    UnixSock* owner = skb.owner;
    const int64_t truesize = skb.truesize;
    const int writer_cpu = skb.writer_cpu;
    if (sk.charge_lines) {
      // skb_unlink(): the queue's own lock, which waits for the store of
      // consumed; __skb_unlink() stores the skb's next and prev and the
      // next skb's prev. consume_skb() finds skb->users at 1 (no atomic).
      // sock_wfree(): sock_flag() loads sk_flags, on the line of the
      // sender's sk_wmem_alloc, then atomic_sub() there.
      path.locked(sk.queue_head_line);
      path.store_to_loaded(skb.link_line_cpu);  // line 0, in the run loaded above
      if (sk.receive_queue.size() > 1) {
        UnixSock::Skb& next = sk.receive_queue[1];
        path.store_to(next.link_line_cpu);
        next.link_line_cpu = p.cpu();
      }
      path.load(owner->wmem_line);
      path.locked(owner->wmem_line);
      owner->skb_freed_on = p.cpu();
      co_await charge(p, path.take_stall());
    }
    sk.receive_queue.pop_front();
    // consume_skb() -> sock_wfree() -> sk_write_space()
    owner->wmem_alloc -= truesize;
    co_await unix_write_space(p, path, *owner);
    if (sk.charge_lines) {
      // sock_wfree()'s atomic_sub_and_test(), on a line this CPU holds,
      // waits for the wakeup's stores. skb_release_data() loads the shared
      // info; kfree() of the data and kmem_cache_free() of the sk_buff
      // each store the free pointer in the object (the data's line the
      // sender wrote) and cmpxchg a slab page of the sender's CPU.
      path.locked(owner->wmem_line);
      path.load_from(writer_cpu);
      path.store_to_loaded(writer_cpu);  // the data's first line, which the copy read
      path.locked(owner->data_page_line);
      path.locked(owner->head_page_line);
      co_await charge(p, path.take_stall());
    }
  }
  if (sk.charge_lines) path.locked(sk.readlock_line);  // mutex_unlock(&u->readlock)
  co_await charge(p, path.take_stall());
  co_return copied;
}

// ---- AF_UNIX on 2.4 (net/unix/af_unix.c, net/core/sock.c and skbuff.c of
// 2.4.19) ----
// With unix_sock_lines, the lines 2.4.19's path loads, stores and locks
// (UnixSock's 2.4 fields). Unlike 4.0: the state lock is an rwlock the
// path only reads (both lock and unlock locked, nobody excluded), so the
// receive queue's own lock is the one that serializes; each socket is
// held and put around a send (sock_hold/sock_put on refcnt); sock_error()
// exchanges sk->err for every skb; sock_def_readable() and
// unix_write_space() read-lock callback_lock; wakeups are never sync;
// the sleepers unlink themselves; an sk_buff is three lines and its data
// comes from a kmalloc-256 object, both from per-CPU arrays of freed ones
// (no free pointer written into them); every read() and write() passes
// fget()/fput() on the socket's struct file and dnotify_parent().
constexpr int64_t SK_BUFF_LINES24 = 3;  // struct sk_buff of 2.4.19: 160 bytes

WaitLines24 sock_wait_lines(UnixSock& sk) {
  return {sk.sleep, sk.socket_flags_line, sk.wait_queue_line, sk.wait_entry_lines};
}
// sock_def_readable() and unix_write_space(): read_lock(&sk->callback_lock);
// waitqueue_active() loads the queue's head, and a linked entry means
// wake_up_interruptible(); sk_wake_async() loads fasync_list;
// read_unlock().
Co<void> sock_wake_up24(Proc& p, LinePath& path, UnixSock& sk) {
  if (!sk.charge_lines) {
    co_await p.wake_up(sk.sleep, 1, 0);
    co_return;
  }
  path.locked(sk.callback_line);
  path.load(sk.wait_queue_line);
  if (sk.sleep.active()) co_await wake_up_lines24(p, path, sock_wait_lines(sk), 0);
  path.load(sk.socket_flags_line);
  path.locked(sk.callback_line);
}
// Takes a freed sk_buff for an allocation on `cpu`: its data's last writer,
// or -1 for memory no CPU holds. mm/slab.c (2.4.19) enable_cpucache():
// objects of at most 256 bytes get arrays of 252, moved in batches of 126.
constexpr size_t SKB_ARRAY_LIMIT = 252, SKB_ARRAY_BATCH = 126;
int take_freed_skb(kernel::Kernel& k, int cpu) {
  auto& shared = k.shared_lines();
  if (shared.freed_skbs.empty()) shared.freed_skbs.resize(static_cast<size_t>(k.nr_cpus()));
  auto& mine = shared.freed_skbs[static_cast<size_t>(cpu)];
  if (mine.empty()) {
    // kmem_cache_alloc_batch(): a batch from the slabs, objects other CPUs gave back.
    const size_t n = std::min(SKB_ARRAY_BATCH, shared.slab_skbs.size());
    mine.assign(shared.slab_skbs.end() - static_cast<std::ptrdiff_t>(n), shared.slab_skbs.end());
    shared.slab_skbs.resize(shared.slab_skbs.size() - n);
  }
  if (mine.empty()) return -1;
  const int writer = mine.back();
  mine.pop_back();
  return writer;
}
// __kmem_cache_free(): a full array gives its newest batch back to the slabs.
void give_back_freed_skb(kernel::Kernel& k, int cpu, int data_writer) {
  auto& shared = k.shared_lines();
  if (shared.freed_skbs.empty()) shared.freed_skbs.resize(static_cast<size_t>(k.nr_cpus()));
  auto& mine = shared.freed_skbs[static_cast<size_t>(cpu)];
  if (mine.size() >= SKB_ARRAY_LIMIT) {
    shared.slab_skbs.insert(shared.slab_skbs.end(), mine.end() - static_cast<std::ptrdiff_t>(SKB_ARRAY_BATCH),
                            mine.end());
    mine.resize(mine.size() - SKB_ARRAY_BATCH);
  }
  mine.push_back(data_writer);
}

// sock_wait_for_wmem() of 2.4.19 with unix_sock_lines: clear_bit() on the
// socket's flags, add_wait_queue(); then each turn set_bit(SOCK_NOSPACE),
// set_current_state()'s xchg, and the loads of wmem_alloc (the queue
// head's line), shutdown and err; remove_wait_queue().
Co<void> sock_wait_for_wmem24(Proc& p, LinePath& path, UnixSock& sk) {
  path.locked(sk.socket_flags_line);
  add_wait_queue_lines24(p, path, sock_wait_lines(sk));
  for (;;) {
    path.locked(sk.socket_flags_line);
    path.barrier();
    path.load(sk.queue_head_line);
    path.load(sk.ref_line);
    path.load(sk.err_line);
    co_await charge(p, path.take_stall());
    if (sndbuf_has_room(sk)) break;
    co_await pipe_wait(p, sk.sleep, "sock_alloc_send_pskb");
  }
  remove_wait_queue_lines24(p, path, sock_wait_lines(sk));
}

// net/unix/af_unix.c (2.4.19) unix_stream_sendmsg() with sock_alloc_send_skb(),
// called by write(2) through sock_write().
Co<int64_t> unix_send24(Proc& p, UnixSock& sk, int64_t len) {
  const auto& c = p.costs();
  UnixSock& other = *sk.peer;
  const bool lines = sk.charge_lines;
  int64_t sent = 0;
  co_await p.syscall(c.syscall_entry);
  LinePath path(p);
  if (lines) {
    fget_lines24(path, sk.file_line);
    // unix_peer_get(): read_lock() and read_unlock() of the state lock
    // around sock_hold(other); then sk->shutdown.
    path.locked(sk.state_lock_line);
    path.locked(other.ref_line);
    path.locked(sk.state_lock_line);
    path.load(sk.ref_line);
  }
  while (sent < len) {
    const UnixSkbShape skb = unix_stream_skb(sk, len - sent);
    const int64_t size = skb.size;
    // sock_alloc_send_skb(): sock_error(), then block while the send
    // buffer is used up (set_bit() of SOCK_ASYNC_NOSPACE and SOCK_NOSPACE
    // first), and sock_error() again.
    if (lines) {
      for (;;) {
        path.locked(sk.err_line);
        path.load(sk.queue_head_line);
        if (sndbuf_has_room(sk)) break;
        set_nospace_bits(path, sk);
        co_await sock_wait_for_wmem24(p, path, sk);
      }
    } else {
      co_await wait_for_sndbuf(p, sk);
    }
    // skb_set_owner_w(): the skb is charged to the sender before the copy.
    const int64_t truesize = skb.truesize;
    sk.wmem_alloc += truesize;
    if (lines) {
      // alloc_skb(): the head and the data from this CPU's arrays (the
      // head's lines this CPU wrote when it freed it; the data's, and the
      // shared info after it, the sender that used it last); the fields
      // set up, then skb_set_owner_w()'s sock_hold(sk) and atomic_add()
      // to wmem_alloc, which wait for those stores; memcpy_fromiovec()
      // stores the data.
      const int data_writer = take_freed_skb(p.kernel(), p.cpu());
      path.store_run_to(p.cpu(), SK_BUFF_LINES24);
      path.store_to(data_writer);
      path.locked(sk.ref_line);
      path.locked(sk.queue_head_line);
      path.store_run_to(data_writer, (size + 63) / 64);
    }
    co_await p.sys(c.unix_send_base + path.take_stall() + copy_cost(p, p.cpu(), size));
    if (lines) {
      // unix_state_rlock(other): locked, but excludes no other reader;
      // other->shutdown; skb_queue_tail() under the queue's lock, which
      // stores the old tail's next; the plain-store unlock; the state
      // lock's read_unlock.
      path.locked(other.state_lock_line);
      path.load(other.ref_line);
      path.locked(other.queue_head_line);
      store_tail_link(p, path, other);
      co_await charge_locked(p, other.queue_lock, path.take_stall());
      path.store(other.queue_head_line);
      path.locked(other.state_lock_line);
    }
    queue_skb(p, sk, other, size, truesize);
    co_await sock_wake_up24(p, path, other);  // other->data_ready()
    sent += size;
  }
  if (lines) {
    path.locked(other.ref_line);  // sock_put(other)
    co_await fput_lines24(p, path, sk.file_line, sent > 0);
  }
  co_return sent;
}

// unix_stream_data_wait() of 2.4.19 with unix_sock_lines: under the state
// lock's read side, add_wait_queue(); each turn set_current_state()'s
// xchg and the loads of the queue's length, err and shutdown, then
// set_bit(SOCK_ASYNC_WAITDATA), read_unlock() and the sleep, read_lock()
// and clear_bit(); at the end remove_wait_queue() and read_unlock().
Co<void> unix_stream_data_wait24(Proc& p, LinePath& path, UnixSock& sk) {
  path.locked(sk.state_lock_line);
  add_wait_queue_lines24(p, path, sock_wait_lines(sk));
  for (;;) {
    path.barrier();
    path.load(sk.queue_head_line);
    path.load(sk.err_line);
    path.load(sk.ref_line);
    if (!sk.receive_queue.empty()) break;
    path.locked(sk.socket_flags_line);
    path.locked(sk.state_lock_line);
    co_await charge(p, path.take_stall());
    if (sk.receive_queue.empty()) co_await pipe_wait(p, sk.sleep, "unix_stream_recvmsg");
    path.locked(sk.state_lock_line);
    path.locked(sk.socket_flags_line);
  }
  remove_wait_queue_lines24(p, path, sock_wait_lines(sk));
  path.locked(sk.state_lock_line);
  co_await charge(p, path.take_stall());
}

// net/unix/af_unix.c (2.4.19) unix_stream_recvmsg(), called by read(2)
// through sock_read().
Co<int64_t> unix_recv24(Proc& p, UnixSock& sk, int64_t size) {
  const auto& c = p.costs();
  const bool lines = sk.charge_lines;
  int64_t copied = 0;
  co_await p.syscall(c.syscall_entry + c.unix_recv_base);
  LinePath path(p);
  if (lines) {
    fget_lines24(path, sk.file_line);
    path.load(sk.ref_line);              // sk->state
    path.locked(sk.readlock_line);       // down(&sk->protinfo.af_unix.readsem)
  }
  while (size > 0) {
    if (lines) path.locked(sk.queue_head_line);  // skb_dequeue(): the queue's lock
    if (sk.receive_queue.empty()) {
      if (lines) {
        path.store(sk.queue_head_line);
        co_await charge_locked(p, sk.queue_lock, path.take_stall());
      }
      if (copied >= 1) break;
      if (lines) {
        // sock_error(); up(); the wait; down().
        path.locked(sk.err_line);
        path.locked(sk.readlock_line);
        co_await unix_stream_data_wait24(p, path, sk);
        path.locked(sk.readlock_line);
      } else {
        co_await p.wait_event(sk.sleep, [&sk] { return !sk.receive_queue.empty(); }, "unix_stream_recvmsg");
      }
      continue;
    }
    UnixSock::Skb skb = sk.receive_queue.front();
    sk.receive_queue.pop_front();
    if (lines) {
      // __skb_unlink(): the skb's first line (links, credentials), the
      // next skb's prev, its own links cleared; the unlock.
      path.load_from(skb.link_line_cpu);
      if (!sk.receive_queue.empty()) {
        UnixSock::Skb& next = sk.receive_queue.front();
        path.store_to(next.link_line_cpu);
        next.link_line_cpu = p.cpu();
      }
      path.store_to_loaded(skb.link_line_cpu);
      co_await charge_locked(p, sk.queue_lock, path.take_stall());
      path.store(sk.queue_head_line);
      // len, and data with the destructor: the other two lines, one batch.
      path.load_run_from(skb.len_line_cpu, SK_BUFF_LINES24 - 1);
      co_await charge(p, path.take_stall());
    }
    const int64_t chunk = co_await copy_skb_chunk(p, skb, size);
    copied += chunk;
    size -= chunk;
    if (lines) {
      path.store_to_loaded(skb.len_line_cpu);  // skb_pull(): len and data, loaded above
      skb.len_line_cpu = skb.link_line_cpu = p.cpu();  // this CPU's, if it goes back
    }
    if (skb.consumed < skb.len) {
      // skb_queue_head(): back at the front, under the queue's lock.
      if (lines) {
        path.locked(sk.queue_head_line);
        co_await charge_locked(p, sk.queue_lock, path.take_stall());
        path.store(sk.queue_head_line);
      }
      sk.receive_queue.push_front(skb);
      break;
    }
    // kfree_skb() -> sock_wfree(): atomic_sub() on the sender's wmem_alloc
    // (its queue head's line), then its write_space(): unix_write_space().
    UnixSock& owner = *skb.owner;
    if (lines) path.locked(owner.queue_head_line);
    owner.wmem_alloc -= skb.truesize;
    if (lines) {
      path.locked(owner.callback_line);
      if ((owner.wmem_alloc << 2) <= owner.sndbuf) {
        path.load(owner.wait_queue_line);
        if (owner.sleep.active()) co_await wake_up_lines24(p, path, sock_wait_lines(owner), 0);
        path.load(owner.socket_flags_line);
      }
      path.locked(owner.callback_line);
      // sock_put(owner); skb_release_data() loads the shared info; the
      // head and the data go to this CPU's arrays.
      path.locked(owner.ref_line);
      path.load_from(skb.writer_cpu);
      give_back_freed_skb(p.kernel(), p.cpu(), skb.writer_cpu);
      co_await charge(p, path.take_stall());
    } else if ((owner.wmem_alloc << 2) <= owner.sndbuf && owner.sleep.active()) {
      co_await p.wake_up(owner.sleep, 1, 0);
    }
  }
  if (lines) {
    path.locked(sk.readlock_line);      // up()
    path.load(sk.wait_queue_line);      // scm_recv(): sock->passcred
    co_await fput_lines24(p, path, sk.file_line, copied > 0);
  }
  co_return copied;
}

}  // namespace

// 4.0 net/unix/af_unix.c unix_stream_sendmsg(): size = min(left,
// sk_sndbuf / 2 - 64, SKB_MAX_HEAD(0) + UNIX_SKB_FRAGS_SZ); what exceeds
// SKB_MAX_HEAD(0) goes to page fragments, rounded up to whole pages
// (data_len = min(size, PAGE_ALIGN(size - SKB_MAX_HEAD(0)))), and the rest
// is the linear head. net/core/skbuff.c alloc_skb_with_frags() adds a page
// to truesize for each fragment page; __alloc_skb() kmallocs
// SKB_DATA_ALIGN(head) + SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) and
// sets truesize = SKB_TRUESIZE(SKB_WITH_OVERHEAD(ksize(data))). 3.10 (before
// "af_unix: improve STREAM behavior with fragmented memory", 2013) caps
// size at SKB_MAX_ALLOC = SKB_MAX_ORDER(0, 2) and allocates it all linear.
// x86_64: PAGE_SIZE 4096, SMP_CACHE_BYTES 64, sizeof(struct sk_buff) 232
// (256 aligned), sizeof(struct skb_shared_info) 320; SLUB's kmalloc caches
// are powers of two up to 8 KiB (with 96 and 192 below these sizes), and a
// larger kmalloc takes whole pages of the next order. The preset's
// unix_skb_truesize_100 is the 100-byte value (768 by this rule); another
// value shifts every size by the same amount.
//
// 2.4.19 (net/unix/af_unix.c unix_stream_sendmsg(), net/core/skbuff.c
// alloc_skb()): size = min(left, sndbuf / 2 - 64, SKB_MAX_ALLOC), all
// linear, and "skb->truesize = size + sizeof(struct sk_buff)" with size
// already SKB_DATA_ALIGN()ed ("XXX: does not include slab overhead"): no
// kmalloc bucket. i386 with CONFIG_MPENTIUM4 (the 2.4 machine's P4):
// SMP_CACHE_BYTES 128; sizeof(struct sk_buff) 160 with CONFIG_NETFILTER and
// CONFIG_NET_SCHED, a distribution's configuration; struct skb_shared_info
// 60 (MAX_SKB_FRAGS 6), so SKB_MAX_ALLOC = (16384 - 60) & ~127 = 16256.
// The preset's 288 at 100 B is 128 + 160.
static UnixSkbShape unix_stream_skb24(const UnixSock& sk, int64_t left) {
  constexpr int64_t kPage = 4096, kCacheBytes = 128, kSkBuff = 160, kSharedInfo = 60;
  constexpr int64_t kMaxAlloc = ((kPage << 2) - kSharedInfo) / kCacheBytes * kCacheBytes;
  const auto truesize = [](int64_t size) { return (size + kCacheBytes - 1) / kCacheBytes * kCacheBytes + kSkBuff; };
  const int64_t size = std::min({left, sk.sndbuf / 2 - 64, kMaxAlloc});
  return {size, truesize(size) + sk.truesize_100 - truesize(100)};
}

UnixSkbShape unix_stream_skb(const UnixSock& sk, int64_t left) {
  if (sk.linux24) return unix_stream_skb24(sk, left);
  constexpr int64_t kPage = 4096, kCacheBytes = 64, kSkBuff = 256, kSharedInfo = 320;
  constexpr int64_t kMaxHead = kPage - kSharedInfo;              // SKB_MAX_HEAD(0)
  constexpr int64_t kMaxAlloc = (kPage << 2) - kSharedInfo;      // SKB_MAX_ALLOC
  constexpr int64_t kFragsSize = 32768;                          // UNIX_SKB_FRAGS_SZ
  const auto align = [](int64_t x, int64_t a) { return (x + a - 1) / a * a; };
  const auto kmalloc_size = [](int64_t n) {
    int64_t k = 512;  // SKB_DATA_ALIGN(0) + 320 already needs kmalloc-512
    while (k < n) k <<= 1;
    return k;
  };
  const auto linear_truesize = [&](int64_t head) {
    return kmalloc_size(align(head, kCacheBytes) + kSharedInfo) + kSkBuff;
  };
  int64_t size = std::min(left, (sk.sndbuf >> 1) - 64);
  int64_t data_len = 0;
  if (sk.paged_skbs) {
    size = std::min(size, kMaxHead + kFragsSize);
    data_len = std::min(size, align(std::max<int64_t>(0, size - kMaxHead), kPage));
  } else {
    size = std::min(size, kMaxAlloc);
  }
  const int64_t exact = linear_truesize(size - data_len) + align(data_len, kPage);
  return {size, exact + sk.truesize_100 - linear_truesize(100)};
}

void make_pipe(const kernel::KernelConfig& cfg, Fd fds[2]) {
  const bool era24 = cfg.preset().version < 206;
  auto pipe = std::make_shared<Pipe>(static_cast<int>(cfg.sysctl("pipe_buffers")), era24);
  pipe->charge_lines = cfg.sysctl("pipe_lines") != 0;
  pipe->v55 = !era24 && cfg.feat("PIPE_V55");
  pipe->buf_lines.resize(static_cast<size_t>(pipe->max_buffers));
  if (era24) pipe->page_lines24.resize(PAGE_SIZE / 64);
  fds[0] = Fd{Fd::Kind::PipeRead, pipe, nullptr, nullptr};
  fds[1] = Fd{Fd::Kind::PipeWrite, pipe, nullptr, nullptr};
}

void make_socketpair(const kernel::KernelConfig& cfg, Fd fds[2]) {
  auto a = std::make_shared<UnixSock>();
  auto b = std::make_shared<UnixSock>();
  for (auto* s : {a.get(), b.get()}) {
    s->sndbuf = cfg.sysctl("unix_sndbuf");
    s->truesize_100 = cfg.sysctl("unix_skb_truesize_100");
    s->linux24 = cfg.preset().version < 206;
    s->paged_skbs = cfg.preset().version >= 400;
    s->wmem_bias = s->linux24 ? 0 : 1;
    s->wmem_alloc = s->wmem_bias;
    s->charge_lines = cfg.sysctl("unix_sock_lines") != 0;
  }
  a->peer = b.get();
  b->peer = a.get();
  fds[0] = Fd{Fd::Kind::Socket, nullptr, a, b};
  fds[1] = Fd{Fd::Kind::Socket, nullptr, b, a};
}

Co<int64_t> sys_write(Proc& p, Fd& fd, int64_t bytes) {
  switch (fd.kind) {
    case Fd::Kind::PipeWrite:
      // (No co_await inside ?: — GCC 12 evaluates both arms.)
      if (fd.pipe->linux24) co_return co_await pipe_write24(p, *fd.pipe, bytes);
      if (fd.pipe->v55) co_return co_await pipe_write55(p, *fd.pipe, bytes);
      co_return co_await pipe_write40(p, *fd.pipe, bytes);
    case Fd::Kind::Socket:
      if (fd.sock->linux24) co_return co_await unix_send24(p, *fd.sock, bytes);
      co_return co_await unix_send(p, *fd.sock, bytes);
    case Fd::Kind::PipeRead:
      break;
  }
  throw std::logic_error("write to the read end of a pipe");
}

Co<int64_t> sys_read(Proc& p, Fd& fd, int64_t bytes) {
  switch (fd.kind) {
    case Fd::Kind::PipeRead:
      if (fd.pipe->linux24) co_return co_await pipe_read24(p, *fd.pipe, bytes);
      if (fd.pipe->v55) co_return co_await pipe_read55(p, *fd.pipe, bytes);
      co_return co_await pipe_read40(p, *fd.pipe, bytes);
    case Fd::Kind::Socket:
      if (fd.sock->linux24) co_return co_await unix_recv24(p, *fd.sock, bytes);
      co_return co_await unix_recv(p, *fd.sock, bytes);
    case Fd::Kind::PipeWrite:
      break;
  }
  throw std::logic_error("read from the write end of a pipe");
}

Co<void> sys_poll_in(Proc& p, Fd& fd) {
  co_await p.syscall(p.costs().syscall_entry + p.costs().poll_base);
  if (fd.kind == Fd::Kind::Socket) {
    UnixSock& sk = *fd.sock;
    co_await p.wait_event(sk.sleep, [&sk] { return !sk.receive_queue.empty(); }, "poll");
  } else {
    Pipe& pipe = *fd.pipe;
    // v5.15 pipe_poll(): poll_wait() on rd_wait (wr_wait only for a file
    // open for writing) and pipe->poll_usage set.
    if (pipe.v55) pipe.poll_usage = true;
    co_await p.wait_event(pipe.v55 ? pipe.rd_wait : pipe.wait, [&pipe] { return pipe.readable(); }, "poll");
  }
}

// --------------------------------------------------------------- futexes --
// kernel/futex.c (v4.0). The private futex key, the hash and the bucket
// spinlock are not costed beyond the system call itself: no sourced figure.

// futex_wait() -> futex_wait_setup() reads the word under the bucket lock
// and queues the task (futex_wait_queue_me()) before it sleeps; the check
// and the queueing are one step here, so no wakeup can fall between them.
Co<int> futex_wait(Proc& p, Futex& f, int val) {
  co_await p.syscall(p.costs().syscall_entry);
  if (f.value != val) co_return FUTEX_EAGAIN;
  bool woken = false;
  co_await p.wait_event(f.waiters, [&woken] { return std::exchange(woken, true); }, "futex_wait_queue_me",
                        true);
  co_return 0;
}

// futex_wake(): wake_futex() -> wake_up_state() for up to nr queued waiters,
// under the bucket lock (wake_q batching came only in 4.2).
Co<void> futex_wake(Proc& p, Futex& f, int nr) {
  co_await p.syscall(p.costs().syscall_entry);
  co_await p.wake_up(f.waiters, nr, 0);
}

}  // namespace workload
