// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bus layer: how the driver reaches the device's registers and doorbells.
 *
 * On the ivshmem transport the register file and the doorbell slots are
 * plain shared memory in BAR2, which the device only notices when the
 * driver writes the ivshmem Doorbell register in BAR0. On silicon the slots
 * would be MMIO registers that notify the device by themselves; keeping
 * both steps here means only this file changes then. The MSI-X vectors
 * the device raises are named here too.
 */
#include <linux/io.h>
#include <linux/pci.h>

#include "rnic.h"

u32 rnic_reg_read(struct rnic_dev *rdev, u32 off)
{
	return readl(rdev->shm + off);
}

void rnic_reg_write(struct rnic_dev *rdev, u32 off, u32 val)
{
	writel(val, rdev->shm + off);
}

/**
 * rnic_kick() - notify the device that state for @vec changed
 * @rdev: the device
 * @vec: device-side doorbell vector
 *
 * writel() orders this after every earlier write to BAR2, so the device
 * sees the new slot or register value when its eventfd fires.
 */
void rnic_kick(struct rnic_dev *rdev, enum rnic_db_vector vec)
{
	writel(rnic_ivshmem_doorbell(vec), rdev->ivshmem + RNIC_IVSHMEM_DOORBELL);
}

/**
 * rnic_doorbell() - write a doorbell slot and notify the device
 * @rdev: the device
 * @slot_off: BAR2 offset of the slot (RNIC_DB_QUEUE_OFF() etc.)
 * @val: slot value in CPU order
 * @vec: device-side doorbell vector that covers the slot
 */
void rnic_doorbell(struct rnic_dev *rdev, u32 slot_off, u32 val,
		   enum rnic_db_vector vec)
{
	writel(val, rdev->shm + slot_off);
	rnic_kick(rdev, vec);
}

/**
 * rnic_irq_vector() - Linux IRQ number of one of our MSI-X vectors
 * @rdev: the device
 * @vec: vector index, 0 .. num_irqs - 1
 *
 * Return: the IRQ number, or -EINVAL if we do not have that vector.
 */
int rnic_irq_vector(struct rnic_dev *rdev, unsigned int vec)
{
	if (vec >= rdev->num_irqs)
		return -EINVAL;
	return pci_irq_vector(rdev->pdev, vec);
}
