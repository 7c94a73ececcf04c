/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libsleepy_lstack.h: a thread's logical stack, for sleepy's activity
 * profiles (issue 16). Link with libsleepy_lstack.a.
 *
 * A program marks its key functions: on entry SLEEPY_LSTACK_PUSH(id, arg),
 * on exit SLEEPY_LSTACK_POP(). The frames go to an area in the thread's
 * own memory (sleepy_lstack_tls: struct sleepy_lstack of the uapi header
 * with room for SLEEPY_LSTACK_FRAMES frames); a thread that registered it
 * (sleepy_lstack_register(), system call 602) has its current stack copied
 * by the kernel's tick into every sample of a session started with
 * sample_start --lstack, and attributed the time it spends blocked.
 *
 * A push or a pop is a few plain loads and stores and a compiler barrier:
 * no system call, no atomic instruction, no lock. They work whether or not
 * the thread registered (or the kernel has the call: ENOSYS), so a program
 * can push and pop unconditionally. A push beyond SLEEPY_LSTACK_FRAMES
 * frames stores no frame but counts its depth, so that the pops stay
 * balanced; the kernel records the frames it has and marks the stack
 * truncated. Only the thread itself may push and pop its area.
 *
 * sleepy_lstack_name(id, "execute") names an id for parse: it appends
 * "ID NAME\n" to /tmp/sleepy-lstack-PID.names (PID the process's), which
 * sample_stop copies next to the session file.
 *
 * The functions return 0, or -1 with errno set, as the libc wrappers do.
 * syscall(2) needs _DEFAULT_SOURCE or _GNU_SOURCE before the first
 * #include of the program; build with -I<uapi dir> for <linux/sleepy.h>.
 */
#ifndef SLEEPY_LIBSLEEPY_LSTACK_H
#define SLEEPY_LIBSLEEPY_LSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sleepy.h>

/* Frames of a thread's area: how deep a stack is recorded whole. */
#define SLEEPY_LSTACK_FRAMES		32

/* struct sleepy_lstack with room for SLEEPY_LSTACK_FRAMES frames. */
struct sleepy_lstack_area {
	uint64_t state;		/* bits 0-15 depth, 16-63 a count */
	uint64_t reserved;
	struct sleepy_lstack_frame frames[SLEEPY_LSTACK_FRAMES];
} __attribute__((aligned(SLEEPY_LSTACK_ALIGN)));

_Static_assert(offsetof(struct sleepy_lstack_area, state) ==
	       offsetof(struct sleepy_lstack, state) &&
	       offsetof(struct sleepy_lstack_area, frames) ==
	       offsetof(struct sleepy_lstack, frames) &&
	       sizeof(struct sleepy_lstack_frame) == 16,
	       "struct sleepy_lstack's layout");
_Static_assert(sizeof(struct sleepy_lstack_area) >= SLEEPY_LSTACK_MIN_SIZE &&
	       sizeof(struct sleepy_lstack_area) <= SLEEPY_LSTACK_MAX_SIZE &&
	       sizeof(struct sleepy_lstack_area) ==
	       16 + 16 * SLEEPY_LSTACK_FRAMES,
	       "the area's size");

/* This thread's logical stack (defined in libsleepy_lstack.c). */
extern __thread struct sleepy_lstack_area sleepy_lstack_tls
	__attribute__((tls_model("initial-exec")));

/* Orders the area's stores against each other and the code around. */
#define SLEEPY_LSTACK_BARRIER()	__asm__ __volatile__("" ::: "memory")

/*
 * x86-64 with GCC: the push in a few instructions that address the area
 * through %fs with the frame's index (the C below makes the compiler
 * rebuild the area's address from the thread pointer at every push).
 * Define SLEEPY_LSTACK_NO_ASM for the C everywhere.
 */
#if defined(__x86_64__) && defined(__GNUC__) && \
	!defined(SLEEPY_LSTACK_NO_ASM) && defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
#define SLEEPY_LSTACK_ASM	1
#endif
#endif

#ifdef SLEEPY_LSTACK_ASM
/* The area's offset from the thread pointer: a link-time constant. */
static inline __attribute__((always_inline))
uintptr_t sleepy_lstack_tpoff(void)
{
	return (uintptr_t)&sleepy_lstack_tls -
	       (uintptr_t)__builtin_thread_pointer();
}
#endif

/*
 * Frame id with parameter arg on top of this thread's logical stack: its
 * frame stored (if there is room), then the state's depth and count
 * bumped, with a compiler barrier between.
 */
static inline __attribute__((always_inline))
void sleepy_lstack_push(uint64_t id, uint64_t arg)
{
#ifdef SLEEPY_LSTACK_ASM
	uint64_t depth;

	__asm__ __volatile__(
		"movzwl %%fs:(%[off]), %k[d]\n\t"
		"cmpl %[cap], %k[d]\n\t"
		"jae 1f\n\t"
		"shll $4, %k[d]\n\t"
		"movq %[id], %%fs:16(%[off],%[d])\n\t"
		"movq %[arg], %%fs:24(%[off],%[d])\n"
		"1:\n\t"
		"addq %[inc], %%fs:(%[off])"
		: [d] "=&r" (depth)
		: [off] "r" (sleepy_lstack_tpoff()), [id] "re" (id),
		  [arg] "re" (arg), [cap] "i" (SLEEPY_LSTACK_FRAMES),
		  [inc] "i" (SLEEPY_LSTACK_STATE_PUSH)
		: "cc", "memory");
#else
	struct sleepy_lstack_area *a = &sleepy_lstack_tls;
	uint64_t depth = a->state & SLEEPY_LSTACK_DEPTH_MASK;

	if (depth < SLEEPY_LSTACK_FRAMES) {
		a->frames[depth].id = id;
		a->frames[depth].arg = arg;
	}
	SLEEPY_LSTACK_BARRIER();
	a->state += SLEEPY_LSTACK_STATE_PUSH;
	SLEEPY_LSTACK_BARRIER();
#endif
}

/* The top frame off this thread's logical stack. */
static inline __attribute__((always_inline))
void sleepy_lstack_pop(void)
{
	SLEEPY_LSTACK_BARRIER();
	sleepy_lstack_tls.state += SLEEPY_LSTACK_STATE_POP;
	SLEEPY_LSTACK_BARRIER();
}

#define SLEEPY_LSTACK_PUSH(id, arg) \
	sleepy_lstack_push((uint64_t)(id), (uint64_t)(arg))
#define SLEEPY_LSTACK_POP()	sleepy_lstack_pop()

/* This thread's current depth (frames pushed and not popped). */
static inline unsigned int sleepy_lstack_depth(void)
{
	return (unsigned int)(sleepy_lstack_tls.state &
			      SLEEPY_LSTACK_DEPTH_MASK);
}

/*
 * The system call itself, for tests: register area of size bytes
 * (flags 0) or unregister it (SLEEPY_LSTACK_UNREGISTER, size 0).
 */
static inline long sleepy_lstack_call(void *area, uint32_t size,
				      uint32_t flags)
{
	return syscall(__NR_sleepy_lstack, area, size, flags);
}

/*
 * Register this thread's area with the kernel, until it unregisters,
 * exits or execs. EBUSY: registered already; ENOSYS: a kernel without
 * logical stacks (pushes and pops still work, unrecorded).
 */
int sleepy_lstack_register(void);

/* End this thread's registration. EINVAL: it had none. */
int sleepy_lstack_unregister(void);

/*
 * Name id for parse: appends "ID NAME\n" to /tmp/sleepy-lstack-PID.names
 * in one write. A later line for the same id wins. EINVAL: name is empty,
 * longer than SLEEPY_LSTACK_NAME_MAX bytes or holds a control character
 * (a newline, a tab); otherwise open(2)'s and write(2)'s errors (ELOOP:
 * the file is a symbolic link; EACCES: it is not a regular file of ours).
 * Thread-safe; a forked child writes its own file.
 */
int sleepy_lstack_name(uint64_t id, const char *name);

#define SLEEPY_LSTACK_NAME_MAX		255
#define SLEEPY_LSTACK_NAMES_FMT		"/tmp/sleepy-lstack-%ld.names"

#endif /* SLEEPY_LIBSLEEPY_LSTACK_H */
