// SPDX-License-Identifier: GPL-2.0
/*
 * Why the lab's guests have no CMPXCHG16B (see scripts/lab/README.md).
 *
 * The instruction sequence of SLUB's allocation fast path in Debian's
 * 6.12 kernel: an ADD (whose source operand becomes TCG's lazy CC_SRC),
 * an XOR with a memory operand (a load, so QEMU writes CC_SRC back to
 * its CPU state), then CMPXCHG16B.  QEMU 7.2's helper for CMPXCHG16B
 * computes the flags with the lazy-flags mode last written back, not the
 * current one; after a POPF that mode is "flags in CC_SRC", so the
 * result is the ADD's operand.  Prints RFLAGS after CMPXCHG16B; a CPU
 * leaves only arithmetic flags, IF and bit 1 there.
 */
#include <stdint.h>
#include <stdio.h>

static uint64_t mem[2] __attribute__((aligned(16))) = { 1, 2 };

int main(void)
{
	uint64_t rax = 7, rdx = 9, rbx = 3, rcx = 4, flags;
	uint64_t rdi = 0x05338f00;	/* RDI in the CI guest's oops */

	asm volatile("pushq $0x2\n\t"
		     "popfq\n\t"
		     "addq %[rdi], %[rax]\n\t"
		     "xorq (%[p]), %[rbx]\n\t"
		     "movq $3, %[rbx]\n\t"
		     "cmpxchg16b %[m]\n\t"
		     "pushfq\n\t"
		     "popq %[fl]\n\t"
		     : [fl] "=r"(flags), [rax] "+a"(rax), [rdx] "+d"(rdx),
		       [rbx] "+b"(rbx), [m] "+m"(mem)
		     : [rdi] "D"(rdi), "c"(rcx), [p] "S"(&mem[1])
		     : "cc", "memory");
	printf("%#llx\n", (unsigned long long)flags);
	/* beyond CF PF AF ZF SF DF OF, IF and bit 1: TF, NT, VM, AC, ... */
	return (flags & ~0xed7ULL) != 0;
}
