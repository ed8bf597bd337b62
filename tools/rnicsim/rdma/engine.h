/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA engine, for whoever makes a device: rdev_config.engine =
 * &rdma_engine (pci/device.h). The PCI function reaches the engine
 * through it alone.
 */
#ifndef RNICSIM_RDMA_ENGINE_H
#define RNICSIM_RDMA_ENGINE_H

struct rdev_engine;

extern const struct rdev_engine rdma_engine;

#endif /* RNICSIM_RDMA_ENGINE_H */
