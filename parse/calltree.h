/* SPDX-License-Identifier: GPL-2.0 */
/*
 * calltree: sampled stacks merged into a call tree, as the IP.com
 * disclosure describes: each stack, root first, goes down the tree from
 * the root, one node per frame, and adds its samples to every node it
 * passes (total) and to the last (self). A frame is a name of a kind
 * (the application, a user or kernel function, a logical frame), so the
 * tree takes frames from any source. Besides samples, a node may carry
 * off-CPU time (the logical stacks' activity tree, lstacktree.h), added
 * the same way.
 *
 * stack_frames() makes a session's stacks into frames: the application
 * (its appid, or with by_app its name), then the user frames outermost
 * first, then the kernel frames, down to the sampled function. Return
 * addresses are looked up one byte back, in the call instruction.
 */
#ifndef SLEEPY_PARSE_CALLTREE_H
#define SLEEPY_PARSE_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "appids.h"
#include "chains.h"
#include "counts.h"
#include "hindex.h"
#include "strtab.h"
#include "symbolize.h"

enum frame_kind {
	FRAME_APP,
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_LOGICAL,
	NR_FRAME_KINDS,
};

struct tree_frame {
	uint32_t name;		/* strtab id of what is shown */
	uint32_t dso;		/* strtab id; 0: none */
	uint8_t kind;		/* enum frame_kind */
};

/* The most frames of a stack: the application, a chain and the IP. */
#define STACK_MAX_FRAMES	(2 + 2 * UINT8_MAX)

struct tnode {
	uint32_t parent;	/* the root's is itself (0) */
	uint32_t child;		/* the first child, 0: none */
	uint32_t next;		/* the next sibling, 0: none */
	struct tree_frame f;
	uint64_t self, total;
	uint64_t off_self, off_total;	/* off-CPU ns */
};

struct calltree {
	struct tnode *v;	/* v[0]: the root, which has no frame */
	size_t n, cap;
	struct hindex index;	/* (parent, frame) -> node */
};

int calltree_init(struct calltree *t);
void calltree_free(struct calltree *t);
/* Add count samples of the stack of n frames, root first. 0 or -1. */
int calltree_add(struct calltree *t, const struct tree_frame *f, size_t n,
		 uint64_t count);
/* The same with off_ns of off-CPU time too. 0 or -1. */
int calltree_add_off(struct calltree *t, const struct tree_frame *f,
		     size_t n, uint64_t count, uint64_t off_ns);

/* The order of a node's children in the views. */
struct tree_order {
	const struct calltree *t;
	const struct strtab *names;
	bool by_total;		/* most samples (then off-CPU time) first;
				 * else by name */
};

/*
 * Node n's children in order o (then by name, kind and DSO) into *out
 * (malloc'd); how many, or -1 when out of memory.
 */
ssize_t calltree_children(const struct tree_order *o, uint32_t n,
			  uint32_t **out);

struct peak_windows;

struct stack_source {
	struct symbolizer *sym;
	const struct appid_table *appids;
	const struct chain_table *chains;
	struct strtab *names;
	bool by_app;		/* the root's frames: apps, not appids */
	uint32_t unknown;	/* strtab id of "[unknown]" */
	struct peak_windows *windows;	/* --peak's calls, or NULL */
};

/*
 * The addresses of a stacks entry (ip, a: appid, b: chain id), innermost
 * first: the IP, the kernel's return addresses, where the task left user
 * mode, the user return addresses (return addresses one byte back, in
 * their call). User frames are kept only as far as the unwind
 * information vouches for them; a 0 after them stands for callers that
 * were recorded but cannot be (shown as "[unknown]"). Into out
 * (STACK_MAX_FRAMES); how many, or -1 when out of memory.
 */
int stack_addrs(const struct stack_source *src, const struct count_entry *e,
		uint64_t *out);

/*
 * The frames of a stacks entry (ip, a: appid, b: chain id), root first,
 * into out (STACK_MAX_FRAMES); how many, or -1 when out of memory.
 */
int stack_frames(const struct stack_source *src, const struct count_entry *e,
		 struct tree_frame *out);

/* The root frame of the appid's stacks: its appid, or with by_app its
 * name. 0, or -1 when out of memory. */
int stack_app_frame(const struct stack_source *src, uint32_t appid,
		    struct tree_frame *f);

#endif /* SLEEPY_PARSE_CALLTREE_H */
