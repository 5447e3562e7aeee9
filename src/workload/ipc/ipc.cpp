#include "workload/ipc/ipc.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace workload {

using kernel::WF_SYNC;

namespace {
constexpr int64_t PAGE_SIZE = 4096;

int64_t copy_cost(Proc& p, int from_cpu, int64_t bytes) {
  const auto& c = p.costs();
  return bytes * c.copy_ns_per_kib / 1024 + p.kernel().machine().transfer_cost(from_cpu, p.cpu(), bytes);
}

// pipe_wait(): sleep on the queue without re-checking (the caller loops);
// the caller (pipe_read/pipe_write) names the wait, as wchan would one frame up.
// The socket waits of the unix_sock_lines what-if sleep through it too.
Co<void> pipe_wait(Proc& p, WaitQueue& wq, const char* caller) {
  bool woken = false;
  co_await p.wait_event(wq, [&woken] { return std::exchange(woken, true); }, caller);
}

int wake_flags_for(bool sync) { return sync ? WF_SYNC : 0; }

// The unix_sock_lines and pipe_lines what-ifs (docs/design.md): each
// metadata line v4.0's af_unix.c or fs/pipe.c loads or stores, charged where
// its copies are.
int64_t load(Proc& p, CacheLine& line) { return line.read(p.kernel().machine(), p.cpu()); }
int64_t store(Proc& p, CacheLine& line) { return line.write(p.kernel().machine(), p.cpu()); }
int64_t transfer_from(Proc& p, int cpu) { return cpu < 0 ? 0 : p.kernel().machine().line_transfer(cpu, p.cpu()); }
// `lines` lines of one object reached through one pointer, fetched
// refill_mlp at a time, as a copy's are.
int64_t transfers_from(Proc& p, int cpu, int64_t lines) {
  const int64_t mlp = p.costs().refill_mlp;
  return (lines + mlp - 1) / mlp * transfer_from(p, cpu);
}
Co<void> charge(Proc& p, int64_t ns) {
  if (ns) co_await p.sys(ns);
}
// A spinlock taken for `hold` (the lines moved while it is held), after
// waiting for the holder.
Co<void> charge_locked(Proc& p, SpinResource& lock, int64_t hold) {
  const int64_t spin = lock.acquire(p.now(), hold);
  co_await charge(p, spin + hold);
}
// ---------------------------------------------------------------- pipes --

// The pipe_lines what-if. struct pipe_inode_info of v4.0 begins with the
// mutex and the wait queue head, one line; nrbufs, curbuf, tmp_page and
// waiting_writers fill the next; each pipe_buffer slot counts as a line.
CacheLine& pipe_entry(Proc& p, Pipe& pipe) { return pipe.wait_entry_lines[p.task()]; }
int pipe_slot(const Pipe& pipe, size_t index) {
  return static_cast<int>((static_cast<size_t>(pipe.curbuf_slot) + index) % pipe.buf_lines.size());
}
// wake_up_interruptible_sync_poll(&pipe->wait): its lock, and each
// sleeper's entry unlinked (a waiter woken before is unlinked already).
int64_t pipe_wake_lines(Proc& p, Pipe& pipe) {
  int64_t lines = store(p, pipe.mutex_wait_line);
  for (const auto& w : pipe.wait.waiters)
    if (w.task->state == kernel::TaskState::Interruptible) lines += store(p, pipe.wait_entry_lines[w.task]);
  return lines;
}
// pipe_wait() with pipe_lines: prepare_to_wait() (the entry, the queue's
// lock) and the mutex released before schedule(); finish_wait() (the entry
// the waker unlinked) and the mutex taken again after it. The first two are
// charged after the sleep, so that no time passes before it.
Co<void> pipe_wait_lines(Proc& p, Pipe& pipe, const char* caller) {
  int64_t lines = store(p, pipe_entry(p, pipe));
  lines += store(p, pipe.mutex_wait_line);
  co_await pipe_wait(p, pipe.wait, caller);
  lines += load(p, pipe_entry(p, pipe));
  lines += store(p, pipe.mutex_wait_line);
  co_await charge(p, lines);
}


// fs/pipe.c (v4.0) pipe_write()
Co<int64_t> pipe_write40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), total_len);
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), hold) + hold);
  int64_t ret = 0;
  bool do_wakeup = false;
  // pipe_lines: __pipe_lock(), then pipe->readers, nrbufs and curbuf.
  int64_t lines = 0;
  if (pipe.charge_lines) {
    lines = store(p, pipe.mutex_wait_line);
    lines += load(p, pipe.info_line);
  }
  const int64_t chars = total_len & (PAGE_SIZE - 1);
  if (!pipe.bufs.empty() && chars != 0) {
    Pipe::Buffer& last = pipe.bufs.back();
    if (last.offset + last.len + chars <= PAGE_SIZE) {
      last.len += chars;
      last.writer_cpu = p.cpu();
      do_wakeup = true;
      ret = chars;
      if (pipe.charge_lines) lines += store(p, pipe.buf_lines[pipe_slot(pipe, pipe.bufs.size() - 1)]);
    }
  }
  while (ret < total_len) {
    if (static_cast<int>(pipe.bufs.size()) < pipe.max_buffers) {
      const int64_t copied = std::min(PAGE_SIZE, total_len - ret);
      if (pipe.charge_lines) {
        // The new slot, nrbufs and tmp_page, and the copy into the recycled
        // page, whose lines the reader read last.
        lines += store(p, pipe.buf_lines[pipe_slot(pipe, pipe.bufs.size())]);
        lines += store(p, pipe.info_line);
        lines += transfers_from(p, pipe.page_reader_cpu, (copied + 63) / 64);
      }
      pipe.bufs.push_back({0, copied, p.cpu()});
      do_wakeup = true;
      ret += copied;
      continue;
    }
    // Ring full: wake readers before sleeping.
    if (do_wakeup) {
      if (pipe.charge_lines) {
        lines += pipe_wake_lines(p, pipe);
        co_await charge(p, lines);
        lines = 0;
      }
      co_await p.wake_up(pipe.wait, 1, WF_SYNC);
      do_wakeup = false;
    }
    pipe.waiting_writers++;
    if (pipe.charge_lines) {
      co_await charge(p, lines + store(p, pipe.info_line));
      lines = 0;
      co_await pipe_wait_lines(p, pipe, "pipe_write");
      lines += store(p, pipe.info_line);
    } else {
      co_await pipe_wait(p, pipe.wait, "pipe_write");
    }
    pipe.waiting_writers--;
  }
  if (pipe.charge_lines) co_await charge(p, lines + (do_wakeup ? pipe_wake_lines(p, pipe) : 0));
  if (do_wakeup) co_await p.wake_up(pipe.wait, 1, WF_SYNC);
  co_return ret;
}

// fs/pipe.c (v4.0) pipe_read()
Co<int64_t> pipe_read40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), c.pipe_read_base) + c.pipe_read_base);
  int64_t ret = 0;
  bool do_wakeup = false;
  // pipe_lines: __pipe_lock(), then nrbufs and curbuf at each turn.
  int64_t lines = 0;
  if (pipe.charge_lines) lines = store(p, pipe.mutex_wait_line);
  for (;;) {
    if (pipe.charge_lines) lines += load(p, pipe.info_line);
    if (!pipe.bufs.empty()) {
      Pipe::Buffer& buf = pipe.bufs.front();
      const int64_t chars = std::min(buf.len, total_len);
      if (pipe.charge_lines) {
        // The slot read and updated (offset, len).
        lines += store(p, pipe.buf_lines[static_cast<size_t>(pipe.curbuf_slot)]);
        co_await charge(p, lines);
        lines = 0;
      }
      co_await p.sys(copy_cost(p, buf.writer_cpu, chars));
      ret += chars;
      buf.offset += chars;
      buf.len -= chars;
      if (buf.len == 0) {
        pipe.bufs.pop_front();
        do_wakeup = true;
        if (pipe.charge_lines) {
          // anon_pipe_buf_release() keeps the page as tmp_page; curbuf and
          // nrbufs move on.
          lines += store(p, pipe.info_line);
          pipe.page_reader_cpu = p.cpu();
          pipe.curbuf_slot = pipe_slot(pipe, 1);
        }
      }
      total_len -= chars;
      if (total_len == 0) break;
      if (!pipe.bufs.empty()) continue;
    }
    if (!pipe.writers) break;
    if (!pipe.waiting_writers && ret) break;
    if (pipe.charge_lines) {
      co_await charge(p, lines + (do_wakeup ? pipe_wake_lines(p, pipe) : 0));
      lines = 0;
    }
    if (do_wakeup) co_await p.wake_up(pipe.wait, 1, WF_SYNC);
    if (pipe.charge_lines)
      co_await pipe_wait_lines(p, pipe, "pipe_read");
    else
      co_await pipe_wait(p, pipe.wait, "pipe_read");
  }
  if (pipe.charge_lines) co_await charge(p, lines + (do_wakeup ? pipe_wake_lines(p, pipe) : 0));
  if (do_wakeup) co_await p.wake_up(pipe.wait, 1, WF_SYNC);
  co_return ret;
}

// fs/pipe.c (2.4.19) pipe_write(): one page; a write <= PIPE_BUF needs room
// for all of it; the end-of-call wakeup is asynchronous.
Co<int64_t> pipe_write24(Proc& p, Pipe& pipe, int64_t count) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), count);
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), hold) + hold);
  const int64_t free_needed = count <= PAGE_SIZE ? count : 1;
  while (PAGE_SIZE - pipe.len24 < free_needed) {
    pipe.waiting_writers++;
    co_await pipe_wait(p, pipe.wait, "pipe_write");
    pipe.waiting_writers--;
  }
  int64_t written = 0;
  while (count > 0) {
    const int64_t space = PAGE_SIZE - pipe.len24;
    if (space) {
      const int64_t chars = std::min(count, space);
      pipe.len24 += chars;
      pipe.writer_cpu24 = p.cpu();
      written += chars;
      count -= chars;
      continue;
    }
    do {
      co_await p.wake_up(pipe.wait, 1, WF_SYNC);  // the writer is about to sleep
      pipe.waiting_writers++;
      co_await pipe_wait(p, pipe.wait, "pipe_write");
      pipe.waiting_writers--;
    } while (PAGE_SIZE - pipe.len24 == 0);
  }
  co_await p.wake_up(pipe.wait, 1, 0);
  co_return written;
}

// fs/pipe.c (2.4.19) pipe_read()
Co<int64_t> pipe_read24(Proc& p, Pipe& pipe, int64_t count) {
  const auto& c = p.costs();
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), c.pipe_read_base) + c.pipe_read_base);
  int64_t read = 0;
  for (;;) {
    while (pipe.len24 == 0) {
      if (!pipe.writers) co_return read;
      co_await pipe_wait(p, pipe.wait, "pipe_read");
    }
    const int64_t chars = std::min(count, pipe.len24);
    co_await p.sys(copy_cost(p, pipe.writer_cpu24, chars));
    pipe.len24 -= chars;
    read += chars;
    count -= chars;
    if (count && pipe.waiting_writers) {
      co_await p.wake_up(pipe.wait, 1, WF_SYNC);  // "we know we are going to sleep"
      continue;
    }
    break;
  }
  co_await p.wake_up(pipe.wait, 1, 0);
  co_return read;
}

// ---------------------------------------------------------- AF_UNIX ----

constexpr int64_t SK_BUFF_LINES = 4;  // struct sk_buff of v4.0: 232 bytes

CacheLine& wait_entry(Proc& p, UnixSock& sk) { return sk.wait_entry_lines[p.task()]; }
// sock_def_readable() and unix_write_space(): wq_has_sleeper() loads the
// queue head; with a sleeper, __wake_up_common() takes the queue's lock and
// autoremove_wake_function() unlinks each sleeper's entry. A waiter woken
// before has been unlinked then, though it leaves the model's queue only
// when it runs.
int64_t wake_lines(Proc& p, UnixSock& sk) {
  int64_t lines = load(p, sk.wait_queue_line);
  bool locked = false;
  for (const auto& w : sk.sleep.waiters) {
    if (w.task->state != kernel::TaskState::Interruptible) continue;
    if (!locked) lines += store(p, sk.wait_queue_line);
    locked = true;
    lines += store(p, sk.wait_entry_lines[w.task]);
  }
  return lines;
}

// unix_write_space(): wake blocked senders once wmem <= sndbuf/4.
Co<void> unix_write_space(Proc& p, UnixSock& sk) {
  if ((sk.wmem_alloc << 2) > sk.sndbuf) co_return;  // unix_writable()
  if (sk.charge_lines) co_await charge(p, wake_lines(p, sk));
  if (sk.sleep.active()) co_await p.wake_up(sk.sleep, 1, wake_flags_for(!sk.linux24));
}

// sock_wait_for_wmem() (net/core/sock.c) with unix_sock_lines: before each
// check, set_bit(SOCK_ASYNC_NOSPACE) on the socket's flags (which all the
// socket's senders share), prepare_to_wait() on its queue, and the load of
// sk_wmem_alloc; the check and the sleep are one step.
Co<void> sock_wait_for_wmem_lines(Proc& p, UnixSock& sk) {
  for (;;) {
    int64_t lines = store(p, sk.socket_flags_line);
    lines += store(p, wait_entry(p, sk));
    lines += store(p, sk.wait_queue_line);
    lines += load(p, sk.wmem_line);
    co_await charge(p, lines);
    if (sk.wmem_alloc - sk.wmem_bias < sk.sndbuf) co_return;
    co_await pipe_wait(p, sk.sleep, "sock_alloc_send_pskb");
  }
}

// unix_stream_data_wait() with unix_sock_lines: under unix_state_lock(sk),
// prepare_to_wait() (the entry's flags, then the queue's lock) and
// skb_peek_tail(), before the sleep and after each wakeup;
// set_bit(SOCK_ASYNC_WAITDATA) before the sleep and clear_bit() after it.
// The set_bit is charged after the sleep, so that no time passes between
// the check and the sleep.
Co<void> unix_stream_data_wait_lines(Proc& p, UnixSock& sk) {
  int64_t hold = store(p, sk.state_lock_line);
  for (;;) {
    hold += store(p, wait_entry(p, sk));
    hold += store(p, sk.wait_queue_line);
    hold += load(p, sk.queue_head_line);
    co_await charge_locked(p, sk.state_lock, hold);
    if (!sk.receive_queue.empty()) co_return;
    const int64_t set_bit = store(p, sk.socket_flags_line);
    co_await pipe_wait(p, sk.sleep, "unix_stream_recvmsg");
    hold = set_bit + store(p, sk.state_lock_line);
    hold += store(p, sk.socket_flags_line);
  }
}

// net/unix/af_unix.c unix_stream_sendmsg() with sock_alloc_send_pskb().
Co<int64_t> unix_send(Proc& p, UnixSock& sk, int64_t len) {
  const auto& c = p.costs();
  UnixSock& other = *sk.peer;
  int64_t sent = 0;
  co_await p.syscall(c.syscall_entry);
  while (sent < len) {
    const int64_t size = std::min(len - sent, (sk.sndbuf >> 1) - 64);
    // sock_alloc_send_pskb(): block while the send buffer is used up; the
    // skb is charged to the sender (skb_set_owner_w) before the copy.
    if (sk.charge_lines && sk.wmem_alloc - sk.wmem_bias >= sk.sndbuf)
      co_await sock_wait_for_wmem_lines(p, sk);
    else
      co_await p.wait_event(
          sk.sleep, [&sk] { return sk.wmem_alloc - sk.wmem_bias < sk.sndbuf; }, "sock_alloc_send_pskb");
    // truesize: SKB_TRUESIZE(kmalloc bucket); the preset gives the 100 B value,
    // larger writes scale with their size.
    const int64_t truesize = sk.truesize_100 + std::max<int64_t>(0, size - 100);
    sk.wmem_alloc += truesize;
    int64_t alloc_lines = 0;
    if (sk.charge_lines) {
      // sock_alloc_send_pskb() loads sk_wmem_alloc; __alloc_skb() stores
      // into the sk_buff (its memset), the shared info and the data, lines
      // the CPU that freed them last wrote or read (the free pointers, the
      // receiver's reads), and skb_set_owner_w()'s locked add waits for
      // those stores; then the add itself.
      alloc_lines = load(p, sk.wmem_line);
      alloc_lines += transfers_from(p, sk.skb_freed_on, SK_BUFF_LINES + 1 + (size + 63) / 64);
      alloc_lines += store(p, sk.wmem_line);
    }
    // alloc_skb(GFP_KERNEL) may sleep: with CONFIG_PREEMPT_VOLUNTARY a
    // preemption point before the work (2.4 has none); none follows until
    // the return to user mode.
    if (sk.linux24)
      co_await p.sys(c.unix_send_base + copy_cost(p, p.cpu(), size));
    else
      co_await p.sys_after_might_sleep(c.unix_send_base + alloc_lines + copy_cost(p, p.cpu(), size));
    if (other.charge_lines) {
      // unix_state_lock(other); maybe_add_creds() loads the receiver's
      // socket flags; skb_queue_tail() stores the queue head and the old tail
      // skb's next pointer; the skb is queued before the unlock.
      int64_t hold = store(p, other.state_lock_line);
      hold += load(p, other.socket_flags_line);
      hold += store(p, other.queue_head_line);
      if (!other.receive_queue.empty()) {
        UnixSock::Skb& tail = other.receive_queue.back();
        hold += transfer_from(p, tail.first_line_cpu);
        tail.first_line_cpu = p.cpu();
      }
      co_await charge_locked(p, other.state_lock, hold);
    }
    other.receive_queue.push_back({size, 0, truesize, p.cpu(), &sk, p.cpu(), false, false});
    // other->sk_data_ready(): sock_def_readable()
    if (other.charge_lines) co_await charge(p, wake_lines(p, other));
    co_await p.wake_up(other.sleep, 1, wake_flags_for(!sk.linux24));
    sent += size;
  }
  co_return sent;
}

// net/unix/af_unix.c unix_stream_recvmsg()
Co<int64_t> unix_recv(Proc& p, UnixSock& sk, int64_t size) {
  const auto& c = p.costs();
  int64_t copied = 0;
  co_await p.syscall(c.syscall_entry + c.unix_recv_base);
  while (size > 0) {
    if (sk.charge_lines) {
      // unix_state_lock(sk); skb_peek(), and unix_skb_len() of the skb found.
      int64_t hold = store(p, sk.state_lock_line);
      hold += load(p, sk.queue_head_line);
      if (!sk.receive_queue.empty() && !sk.receive_queue.front().first_line_read) {
        hold += transfer_from(p, sk.receive_queue.front().first_line_cpu);
        sk.receive_queue.front().first_line_read = true;
      }
      co_await charge_locked(p, sk.state_lock, hold);
    }
    if (sk.receive_queue.empty()) {
      if (copied >= 1) break;
      if (sk.charge_lines)
        co_await unix_stream_data_wait_lines(p, sk);
      else
        co_await p.wait_event(sk.sleep, [&sk] { return !sk.receive_queue.empty(); }, "unix_stream_recvmsg");
      continue;
    }
    UnixSock::Skb& skb = sk.receive_queue.front();
    if (sk.charge_lines && !skb.rest_read) {
      // The sk_buff's first line (if it was queued while this CPU held the
      // lock) and its other lines, which skb_copy_datagram_msg() and the
      // free read.
      int64_t lines = skb.first_line_read ? 0 : transfer_from(p, skb.first_line_cpu);
      lines += transfers_from(p, skb.writer_cpu, SK_BUFF_LINES - 1);
      skb.first_line_read = skb.rest_read = true;
      co_await charge(p, lines);
    }
    const int64_t chunk = std::min(skb.len - skb.consumed, size);
    co_await p.sys(copy_cost(p, skb.writer_cpu, chunk));
    copied += chunk;
    size -= chunk;
    skb.consumed += chunk;
    if (skb.consumed < skb.len) break;
    UnixSock* owner = skb.owner;
    const int64_t truesize = skb.truesize;
    const int writer_cpu = skb.writer_cpu;
    if (sk.charge_lines) {
      // skb_unlink(): the queue head, and the next skb's prev pointer;
      // consume_skb() -> skb_release_head_state() -> sock_wfree(): the
      // sender's sk_wmem_alloc.
      int64_t lines = store(p, sk.queue_head_line);
      if (sk.receive_queue.size() > 1) {
        UnixSock::Skb& next = sk.receive_queue[1];
        lines += transfer_from(p, next.first_line_cpu);
        next.first_line_cpu = p.cpu();
      }
      lines += store(p, owner->wmem_line);
      owner->skb_freed_on = p.cpu();
      co_await charge(p, lines);
    }
    sk.receive_queue.pop_front();
    // consume_skb() -> sock_wfree() -> sk_write_space()
    owner->wmem_alloc -= truesize;
    co_await unix_write_space(p, *owner);
    if (sk.charge_lines) {
      // Then skb_release_data() loads the shared info, and the data's and the
      // sk_buff's frees each cmpxchg a slab page of the sender's CPU.
      int64_t lines = transfer_from(p, writer_cpu);
      lines += store(p, owner->data_page_line);
      lines += store(p, owner->head_page_line);
      co_await charge(p, lines);
    }
  }
  co_return copied;
}

}  // namespace

int64_t SpinResource::acquire(int64_t now, int64_t hold) {
  const int64_t spin = std::max<int64_t>(0, free_at - now);
  free_at = now + spin + hold;
  return spin;
}

void make_pipe(const kernel::KernelConfig& cfg, Fd fds[2]) {
  const bool era24 = cfg.preset().version < 206;
  auto pipe = std::make_shared<Pipe>(static_cast<int>(cfg.sysctl("pipe_buffers")), era24);
  pipe->charge_lines = cfg.sysctl("pipe_lines") != 0;
  pipe->buf_lines.resize(static_cast<size_t>(pipe->max_buffers));
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
      co_return co_await pipe_write40(p, *fd.pipe, bytes);
    case Fd::Kind::Socket:
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
      co_return co_await pipe_read40(p, *fd.pipe, bytes);
    case Fd::Kind::Socket:
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
    co_await p.wait_event(pipe.wait, [&pipe] { return pipe.readable(); }, "poll");
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
