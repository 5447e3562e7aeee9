// Pipes, AF_UNIX stream sockets and futexes, modelled on fs/pipe.c and
// net/unix/af_unix.c of the preset's era (4.0: 16 page buffers with small
// writes merged into the last page, sync wakeups; 2.4: one 4 KiB page,
// sync wakeups only just before the caller sleeps). See docs/design.md.
//
// The kernel paths are coroutines run by the calling task: they charge the
// syscall, copy and locking costs as kernel work, change the channel state
// and wake waiters exactly where the C code does.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hw/cache_line.hpp"
#include "hw/cpumask.hpp"
#include "hw/machine.hpp"
#include "kernel/kernel.hpp"

namespace workload {

using kernel::Co;
using kernel::Proc;
using kernel::WaitQueue;
using hw::CacheLine;

using kernel::SpinResource;

struct Pipe {
  struct Buffer {
    int64_t offset = 0;  // start of unread data in the page
    int64_t len = 0;     // unread bytes
    int writer_cpu = -1;
  };
  explicit Pipe(int buffers, bool era24) : max_buffers(buffers), linux24(era24) {}
  int max_buffers;  // pipe->buffers (16) ; 2.4: one page ring
  bool linux24;
  std::deque<Buffer> bufs;
  int64_t len24 = 0;  // 2.4: bytes in the one-page ring
  int writer_cpu24 = -1;
  int readers = 1, writers = 1;
  int waiting_writers = 0;
  WaitQueue wait;  // PIPE_WAIT: readers and writers share it
  // PIPE_V55 (what-if, fs/pipe.c of v5.5 to 6.x): the reader's and the
  // writers' own queues, each waited on exclusively; head/tail move under
  // rd_wait's lock. Both locks sit on the mutex's line in v5.15's
  // pipe_inode_info (mutex at 0, rd_wait at 32, wr_wait's lock at 56), the
  // head and tail on the next, info_line.
  bool v55 = false;
  WaitQueue rd_wait, wr_wait;
  bool poll_usage = false;  // set by pipe_poll(): every write wakes the reader
  SpinResource mutex;
  [[nodiscard]] bool readable() const { return linux24 ? len24 > 0 : !bufs.empty(); }
  // The pipe_lines switch (docs/design.md): pipe->mutex and pipe->wait
  // (one line), nrbufs/curbuf/tmp_page/waiting_writers (one), the
  // pipe_buffer slots, each sleeper's wait entry, and the CPU that read
  // pipe->tmp_page, the page the reader kept at a release for the next new
  // buffer (-1: none kept).
  bool charge_lines = false;
  CacheLine mutex_wait_line, info_line;
  std::vector<CacheLine> buf_lines;
  int curbuf_slot = 0;
  int tmp_page_reader_cpu = -1;
  std::unordered_map<const kernel::Task*, CacheLine> wait_entry_lines;
  // On 2.4 (fs/pipe.c, include/linux/pipe_fs_i.h of 2.4.19, i386 with
  // 64-byte lines): info_line is the whole 48-byte pipe_inode_info, the
  // wait queue's lock and head with base, len, start and the counters;
  // sem_line the inode's line of i_sem with i_atime, i_mtime and i_ctime;
  // page_lines24 the one data page's lines, start24 PIPE_START.
  CacheLine sem_line;
  std::vector<CacheLine> page_lines24;
  int64_t start24 = 0;
  CacheLine read_file_line, write_file_line;  // each end's struct file: f_count
};

struct UnixSock {
  int64_t sndbuf = 212992;
  int64_t wmem_alloc = 1;  // 4.0 starts at 1 (sk_alloc); 2.4 at 0
  int64_t wmem_bias = 1;
  int64_t truesize_100 = 768;
  bool linux24 = false;
  // 4.0's unix_stream_sendmsg() puts what exceeds a page's head into page
  // fragments (UNIX_SKB_FRAGS_SZ); 3.10's allocates every skb linear.
  bool paged_skbs = true;
  UnixSock* peer = nullptr;
  struct Skb {
    int64_t len = 0, consumed = 0, truesize = 0;
    int writer_cpu = -1;
    UnixSock* owner = nullptr;
    // unix_sock_lines: the CPUs that wrote last the sk_buff's line 0 (next
    // and prev: its sender, the next sender linking behind it, the
    // receiver unlinking the one before it) and its line 1 (len, and cb
    // with UNIXCB(skb).consumed: its sender, or the receiver), and whether
    // the receiver has read line 1, and the other lines, yet.
    int link_line_cpu = -1, len_line_cpu = -1;
    bool len_line_read = false, rest_read = false;
  };
  std::deque<Skb> receive_queue;
  WaitQueue sleep;  // sk_sleep(sk): senders waiting for wmem, readers, pollers
  // The unix_sock_lines switch (docs/design.md): the state lock and the
  // socket's metadata lines.
  bool charge_lines = false;
  SpinResource state_lock;  // unix_state_lock()
  CacheLine state_lock_line;
  CacheLine queue_head_line;  // sk_receive_queue: next, prev, qlen and its own lock
  CacheLine wmem_line;        // sk_wmem_alloc, with sk_flags and sk_sndbuf
  CacheLine readlock_line;    // u->readlock, the receivers' mutex
  CacheLine socket_flags_line;  // sk->sk_socket->flags (SOCK_ASYNC_*, SOCK_PASSCRED)
  CacheLine wait_queue_line;  // sk_sleep(sk)'s head and lock
  // Each sleeper's on-stack wait_queue_t, which a waker unlinks.
  std::unordered_map<const kernel::Task*, CacheLine> wait_entry_lines;
  // The slab pages this socket's skbs return to (skbuff_head_cache and
  // kmalloc-512; the sender's CPU's pages, written by each remote free), and
  // the CPU that freed one of its skbs last, whose free pointers the next
  // allocation loads.
  CacheLine head_page_line, data_page_line;
  int skb_freed_on = -1;
  // On 2.4 (net/unix/af_unix.c, include/net/sock.h and fs' struct inode of
  // 2.4.19, i386 with 64-byte lines) the lines are laid out otherwise:
  // queue_head_line holds the receive queue's head and lock with
  // wmem_alloc and the sleep pointer (there is no wmem_line);
  // socket_flags_line is the inode's line of struct socket's flags,
  // fasync_list and its wait queue's lock; wait_queue_line the next one,
  // with the queue's list head, type and passcred; state_lock_line the
  // unix_opt rwlock; readlock_line readsem. And:
  CacheLine ref_line;       // refcnt, state, shutdown
  CacheLine callback_line;  // callback_lock, an rwlock
  CacheLine err_line;       // sk->err, which sock_error() exchanges
  CacheLine file_line;      // the socket's struct file: f_count, shared by every task that has the fd
  SpinResource queue_lock;  // receive_queue.lock: the state lock only reads on 2.4
};

// One skb of a stream write with `left` bytes still to send, as 2.4.19's,
// 3.10's and 4.0's unix_stream_sendmsg() size it: the bytes it carries and
// its skb->truesize, which is charged to the sender's sk_wmem_alloc.
struct UnixSkbShape {
  int64_t size = 0;
  int64_t truesize = 0;
};
UnixSkbShape unix_stream_skb(const UnixSock& sk, int64_t left);

// A file descriptor: one end of a pipe or a connected socket.
struct Fd {
  enum class Kind { PipeRead, PipeWrite, Socket } kind = Kind::Socket;
  std::shared_ptr<Pipe> pipe;
  std::shared_ptr<UnixSock> sock;
  std::shared_ptr<UnixSock> peer;  // keeps the other end alive
};

// A futex word in user memory and its hash-bucket queue (kernel/futex.c).
// User space changes `value` with atomics, which are instantaneous here.
struct Futex {
  int value = 0;
  WaitQueue waiters;
};
constexpr int FUTEX_EAGAIN = -11;  // -EWOULDBLOCK
// futex(uaddr, FUTEX_WAIT_PRIVATE, val): sleep until woken if the word still
// holds val; returns 0 when woken, FUTEX_EAGAIN when it did not.
Co<int> futex_wait(Proc& p, Futex& f, int val);
// futex(uaddr, FUTEX_WAKE_PRIVATE, nr): wake up to nr waiters (not a sync
// wakeup: the waker goes on running).
Co<void> futex_wake(Proc& p, Futex& f, int nr);

// pipe(2) and socketpair(AF_UNIX, SOCK_STREAM) following the kernel config.
void make_pipe(const kernel::KernelConfig& cfg, Fd fds[2]);
void make_socketpair(const kernel::KernelConfig& cfg, Fd fds[2]);

Co<int64_t> sys_write(Proc& p, Fd& fd, int64_t bytes);
Co<int64_t> sys_read(Proc& p, Fd& fd, int64_t bytes);
// poll(fd, POLLIN, -1)
Co<void> sys_poll_in(Proc& p, Fd& fd);

}  // namespace workload
