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
Co<void> pipe_wait(Proc& p, WaitQueue& wq, const char* caller) {
  bool woken = false;
  co_await p.wait_event(wq, [&woken] { return std::exchange(woken, true); }, caller);
}

int wake_flags_for(bool sync) { return sync ? WF_SYNC : 0; }

// ---------------------------------------------------------------- pipes --

// fs/pipe.c (v4.0) pipe_write()
Co<int64_t> pipe_write40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  const int64_t hold = c.pipe_write_base + copy_cost(p, p.cpu(), total_len);
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), hold) + hold);
  int64_t ret = 0;
  bool do_wakeup = false;
  const int64_t chars = total_len & (PAGE_SIZE - 1);
  if (!pipe.bufs.empty() && chars != 0) {
    Pipe::Buffer& last = pipe.bufs.back();
    if (last.offset + last.len + chars <= PAGE_SIZE) {
      last.len += chars;
      last.writer_cpu = p.cpu();
      do_wakeup = true;
      ret = chars;
    }
  }
  while (ret < total_len) {
    if (static_cast<int>(pipe.bufs.size()) < pipe.max_buffers) {
      const int64_t copied = std::min(PAGE_SIZE, total_len - ret);
      pipe.bufs.push_back({0, copied, p.cpu()});
      do_wakeup = true;
      ret += copied;
      continue;
    }
    // Ring full: wake readers before sleeping.
    if (do_wakeup) {
      co_await p.wake_up(pipe.wait, 1, WF_SYNC);
      do_wakeup = false;
    }
    pipe.waiting_writers++;
    co_await pipe_wait(p, pipe.wait, "pipe_write");
    pipe.waiting_writers--;
  }
  if (do_wakeup) co_await p.wake_up(pipe.wait, 1, WF_SYNC);
  co_return ret;
}

// fs/pipe.c (v4.0) pipe_read()
Co<int64_t> pipe_read40(Proc& p, Pipe& pipe, int64_t total_len) {
  const auto& c = p.costs();
  co_await p.syscall(c.syscall_entry + pipe.mutex.acquire(p.now(), c.pipe_read_base) + c.pipe_read_base);
  int64_t ret = 0;
  bool do_wakeup = false;
  for (;;) {
    if (!pipe.bufs.empty()) {
      Pipe::Buffer& buf = pipe.bufs.front();
      const int64_t chars = std::min(buf.len, total_len);
      co_await p.sys(copy_cost(p, buf.writer_cpu, chars));
      ret += chars;
      buf.offset += chars;
      buf.len -= chars;
      if (buf.len == 0) {
        pipe.bufs.pop_front();
        do_wakeup = true;
      }
      total_len -= chars;
      if (total_len == 0) break;
      if (!pipe.bufs.empty()) continue;
    }
    if (!pipe.writers) break;
    if (!pipe.waiting_writers && ret) break;
    if (do_wakeup) co_await p.wake_up(pipe.wait, 1, WF_SYNC);
    co_await pipe_wait(p, pipe.wait, "pipe_read");
  }
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

// The unix_sock_lines what-if. A line another CPU wrote last costs a transfer
// of their distance; writing it makes this CPU the last writer. (A read
// leaves the line where it was: the next reader from afar pays again.)
int64_t read_line(Proc& p, int last_writer) {
  return last_writer < 0 ? 0 : p.kernel().machine().line_transfer(last_writer, p.cpu());
}
int64_t write_line(Proc& p, int& last_writer) {
  const int64_t cost = read_line(p, last_writer);
  last_writer = p.cpu();
  return cost;
}

// unix_write_space(): wake blocked senders once wmem <= sndbuf/4.
Co<void> unix_write_space(Proc& p, UnixSock& sk) {
  if ((sk.wmem_alloc << 2) <= sk.sndbuf && sk.sleep.active())
    co_await p.wake_up(sk.sleep, 1, wake_flags_for(!sk.linux24));
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
    if (sk.charge_lines && sk.wmem_alloc - sk.wmem_bias >= sk.sndbuf) {
      // sock_wait_for_wmem(): prepare_to_wait() on the sender's own queue.
      if (const int64_t line = write_line(p, sk.wait_queue_line)) co_await p.sys(line);
    }
    co_await p.wait_event(
        sk.sleep, [&sk] { return sk.wmem_alloc - sk.wmem_bias < sk.sndbuf; }, "sock_alloc_send_pskb");
    // truesize: SKB_TRUESIZE(kmalloc bucket); the preset gives the 100 B value,
    // larger writes scale with their size.
    const int64_t truesize = sk.truesize_100 + std::max<int64_t>(0, size - 100);
    sk.wmem_alloc += truesize;
    // skb_set_owner_w(): the atomic add on sk_wmem_alloc, which the
    // receivers' sock_wfree() wrote last.
    const int64_t wmem_line = sk.charge_lines ? write_line(p, sk.wmem_line) : 0;
    // alloc_skb(GFP_KERNEL) may sleep: with CONFIG_PREEMPT_VOLUNTARY a
    // preemption point before the work (2.4 has none); none follows until
    // the return to user mode.
    if (sk.linux24)
      co_await p.sys(c.unix_send_base + copy_cost(p, p.cpu(), size));
    else
      co_await p.sys_after_might_sleep(c.unix_send_base + wmem_line + copy_cost(p, p.cpu(), size));
    if (other.charge_lines) {
      // unix_state_lock(other); skb_queue_tail(): the lock, the queue head and
      // the old tail skb's next pointer, held while they are brought over.
      int64_t hold = write_line(p, other.state_lock_line) + write_line(p, other.queue_head_line);
      if (!other.receive_queue.empty()) hold += read_line(p, other.receive_queue.back().writer_cpu);
      const int64_t spin = other.state_lock.acquire(p.now(), hold);
      // sock_def_readable(): wq_has_sleeper() reads the wait queue head; with
      // a sleeper the wakeup takes its lock.
      const int64_t wait_line =
          other.sleep.active() ? write_line(p, other.wait_queue_line) : read_line(p, other.wait_queue_line);
      if (spin + hold + wait_line) co_await p.sys(spin + hold + wait_line);
    }
    other.receive_queue.push_back({size, 0, truesize, p.cpu(), &sk});
    // other->sk_data_ready(): sock_def_readable()
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
      // unix_state_lock(sk); skb_peek(): the lock and the queue head, which
      // skb_unlink() then writes.
      const int64_t hold = write_line(p, sk.state_lock_line) + write_line(p, sk.queue_head_line);
      const int64_t spin = sk.state_lock.acquire(p.now(), hold);
      if (spin + hold) co_await p.sys(spin + hold);
    }
    if (sk.receive_queue.empty()) {
      if (copied >= 1) break;
      if (sk.charge_lines) {
        // unix_stream_data_wait(): prepare_to_wait() on the socket's queue.
        if (const int64_t line = write_line(p, sk.wait_queue_line)) co_await p.sys(line);
      }
      co_await p.wait_event(sk.sleep, [&sk] { return !sk.receive_queue.empty(); }, "unix_stream_recvmsg");
      continue;
    }
    UnixSock::Skb& skb = sk.receive_queue.front();
    const int64_t chunk = std::min(skb.len - skb.consumed, size);
    co_await p.sys(copy_cost(p, skb.writer_cpu, chunk));
    copied += chunk;
    size -= chunk;
    skb.consumed += chunk;
    if (skb.consumed < skb.len) break;
    UnixSock* owner = skb.owner;
    const int64_t truesize = skb.truesize;
    if (sk.charge_lines) {
      // The sender wrote the sk_buff head (two lines), its shared info, and
      // the slab page the free returns it to (one line each); sock_wfree()
      // writes the sender's sk_wmem_alloc and unix_write_space() reads its
      // wait queue.
      const int64_t lines =
          4 * read_line(p, skb.writer_cpu) + write_line(p, owner->wmem_line) + read_line(p, owner->wait_queue_line);
      if (lines) co_await p.sys(lines);
    }
    sk.receive_queue.pop_front();
    // consume_skb() -> sock_wfree() -> sk_write_space()
    owner->wmem_alloc -= truesize;
    co_await unix_write_space(p, *owner);
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
    if (s->charge_lines && s->linux24)
      throw std::invalid_argument("unix_sock_lines follows 4.0's af_unix.c: not for a 2.4 preset");
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
