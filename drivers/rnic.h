/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rnic: driver-wide definitions.
 */
#ifndef _RNIC_H_
#define _RNIC_H_

#include <linux/etherdevice.h>
#include <linux/pci.h>

#include "rnic_hw.h"

#define DRV_MODULE_NAME		"rnic"

/**
 * struct rnic_dev - one rnic PCI function
 * @pdev: the PCI function
 * @ivshmem: BAR0, the ivshmem registers (Doorbell)
 * @shm: BAR2, the device's signature block, register file and doorbells
 * @shm_len: size of BAR2
 * @caps: RNIC_CAP_* the device offers
 * @num_msix: MSI-X vectors the device may raise
 * @max_frame: largest frame the device moves, VLAN tag and ICRC included
 * @speed_mbps: port speed
 * @mac: permanent MAC address from the signature block
 * @model_version: the device's version string
 */
struct rnic_dev {
	struct pci_dev *pdev;
	void __iomem *ivshmem;
	void __iomem *shm;
	resource_size_t shm_len;

	u32 caps;
	u16 num_msix;
	u32 max_frame;
	u32 speed_mbps;
	u8 mac[ETH_ALEN];
	char model_version[RNIC_MODEL_VERSION_LEN];
};

/* rnic_bus.c: the only code that touches BAR0/BAR2 directly */
u32 rnic_reg_read(struct rnic_dev *rdev, u32 off);
void rnic_reg_write(struct rnic_dev *rdev, u32 off, u32 val);
void rnic_kick(struct rnic_dev *rdev, enum rnic_db_vector vec);
void rnic_doorbell(struct rnic_dev *rdev, u32 slot_off, u32 val,
		   enum rnic_db_vector vec);

#endif /* _RNIC_H_ */
