// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: RDMA driver for the rnic RoCE PCI NIC.
 *
 * The NIC appears as an ivshmem-doorbell function (1af4:1110). That ID is
 * generic, so probe reads the signature block in BAR2 before it writes
 * anything and leaves any other ivshmem device alone.
 *
 * Probe has two phases: the device (BARs, MSI-X, reset, admin and event
 * queues), then the consumers (netdev, then the ib_device bound to it).
 * Remove undoes them in mirror order.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "rnic.h"
#include "rnic_param.h"

/*
 * Read the signature block and decide whether this function is an rnic we
 * can drive: one that serves ABI 2.0. Reads only: a shared-memory device of
 * another user must not see a single write from us.
 */
static int rnic_read_sig(struct rnic_dev *rdev)
{
	struct device *dev = &rdev->pdev->dev;
	struct rnic_sig sig;
	u32 magic;
	u16 major, compat;

	if (rdev->shm_len < RNIC_SHM_MIN_SIZE) {
		dev_info(dev, "ivshmem BAR2 is %pa bytes, too small for an rnic; not binding\n",
			 &rdev->shm_len);
		return -ENODEV;
	}
	memcpy_fromio(&sig, rdev->shm + RNIC_SIG_OFF, sizeof(sig));
	magic = le32_to_cpu(sig.magic);
	major = le16_to_cpu(sig.abi_major);
	compat = le16_to_cpu(sig.abi_compat);
	if (magic != RNIC_SIG_MAGIC) {
		dev_info(dev, "ivshmem device without rnic signature (%#010x); not binding\n",
			 magic);
		return -ENODEV;
	}
	if (!rnic_sig_serves(magic, major, compat, RNIC_ABI2_MAJOR)) {
		dev_err(dev, "rnic serves ABI %u.%u (majors %#x); this driver needs ABI 2.0, where the NIC runs the transport (ABI 1.0 is no longer supported): update the NIC's model or firmware; not binding\n",
			major, le16_to_cpu(sig.abi_minor), compat);
		return -ENODEV;
	}
	if (rdev->shm_len < RNIC_SHM_MIN_SIZE_ABI2) {
		dev_err(dev, "rnic BAR2 is %pa bytes, too small for ABI 2.0; not binding\n",
			&rdev->shm_len);
		return -ENODEV;
	}

	rdev->caps = le32_to_cpu(sig.caps) & RNIC_CAP_ALL_ABI2;
	rdev->num_msix = le16_to_cpu(sig.num_msix);
	ether_addr_copy(rdev->mac, sig.mac);
	if (!is_valid_ether_addr(rdev->mac)) {
		dev_err(dev, "rnic reports invalid MAC %pM; not binding\n",
			rdev->mac);
		return -EINVAL;
	}
	return 0;
}

/* The device's own view, once it runs; the signature was only a hint. */
static int rnic_query_device(struct rnic_dev *rdev)
{
	struct rnic_device_attr attr;
	int err;

	err = rnic_cmd_query_device(rdev, &attr);
	if (err) {
		rnic_err(rdev, "QUERY_DEVICE failed: %d\n", err);
		return err;
	}
	rdev->abi_minor = le16_to_cpu(attr.abi_minor);
	/* What 2.1 added is only read when set: a 2.0 device still works. */
	if (rdev->abi_minor < 1)
		rnic_warn(rdev, "device runs ABI 2.%u: it does not report the SRQ receive a QP drops when reset or destroyed, so such an SRQ slot stays taken until its SRQ is destroyed; update the NIC's model or firmware (ABI 2.1)\n",
			  rdev->abi_minor);
	rdev->caps = le32_to_cpu(attr.caps) & RNIC_CAP_ALL_ABI2;
	rdev->max_queues = min_t(u16, le16_to_cpu(attr.max_queues),
				 RNIC_MAX_QUEUES);
	rdev->max_cqs = min_t(u16, le16_to_cpu(attr.max_cqs), RNIC_MAX_CQS);
	rdev->max_ring_log2 = min_t(u8, attr.max_ring_log2, RNIC_RING_LOG2_MAX);
	rdev->max_cq_log2 = min_t(u8, attr.max_cq_log2, RNIC_CQ_LOG2_MAX);
	rdev->max_frame = le32_to_cpu(attr.max_frame);
	rdev->speed_mbps = le32_to_cpu(attr.speed_mbps);
	strscpy(rdev->model_version, attr.model_version,
		sizeof(rdev->model_version));

	if (rdev->max_frame < RNIC_MTU_MIN + RNIC_FRAME_OVERHEAD ||
	    rdev->max_ring_log2 < RNIC_RING_LOG2_MIN ||
	    rdev->max_cq_log2 < RNIC_CQ_LOG2_MIN || !rdev->max_queues ||
	    !rdev->max_cqs) {
		rnic_err(rdev, "device reports unusable limits (max_frame %u, ring 2^%u, CQ 2^%u, %u queues, %u CQs)\n",
			 rdev->max_frame, rdev->max_ring_log2,
			 rdev->max_cq_log2, rdev->max_queues, rdev->max_cqs);
		return -EINVAL;
	}
	return 0;
}

/* Phase 1: a running device with admin and event queues. */
static int rnic_probe_dev(struct rnic_dev *rdev)
{
	struct pci_dev *pdev = rdev->pdev;
	int err;

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(&pdev->dev, "cannot enable PCI device: %d\n", err);
		return err;
	}

	err = pci_request_region(pdev, RNIC_BAR_SHM, DRV_MODULE_NAME);
	if (err)
		goto err_disable;
	rdev->shm_len = pci_resource_len(pdev, RNIC_BAR_SHM);
	rdev->shm = pci_iomap(pdev, RNIC_BAR_SHM, 0);
	if (!rdev->shm) {
		err = -ENOMEM;
		goto err_release_shm;
	}

	err = rnic_read_sig(rdev);
	if (err)
		goto err_unmap_shm;

	err = pci_request_region(pdev, RNIC_BAR_IVSHMEM, DRV_MODULE_NAME);
	if (err)
		goto err_unmap_shm;
	rdev->ivshmem = pci_iomap(pdev, RNIC_BAR_IVSHMEM, 0);
	if (!rdev->ivshmem) {
		err = -ENOMEM;
		goto err_release_ivshmem;
	}

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		goto err_unmap_ivshmem;
	pci_set_master(pdev);

	err = rnic_irq_init(rdev);
	if (err)
		goto err_clear_master;

	err = rnic_dev_reset(rdev);
	if (err)
		goto err_free_irqs;

	err = rnic_eq_init(rdev);
	if (err)
		goto err_free_irqs;

	err = rnic_aq_init(rdev);
	if (err)
		goto err_destroy_eq;

	err = rnic_dev_enable(rdev);
	if (err)
		goto err_reset;
	rnic_eq_start(rdev);

	err = rnic_query_device(rdev);
	if (err)
		goto err_reset;
	return 0;

err_reset:
	/* the device must let go of the rings before they are freed */
	rnic_dev_reset(rdev);
	rnic_aq_destroy(rdev);
err_destroy_eq:
	rnic_eq_destroy(rdev);
err_free_irqs:
	rnic_irq_destroy(rdev);
err_clear_master:
	pci_clear_master(pdev);
err_unmap_ivshmem:
	pci_iounmap(pdev, rdev->ivshmem);
err_release_ivshmem:
	pci_release_region(pdev, RNIC_BAR_IVSHMEM);
err_unmap_shm:
	pci_iounmap(pdev, rdev->shm);
err_release_shm:
	pci_release_region(pdev, RNIC_BAR_SHM);
err_disable:
	pci_disable_device(pdev);
	return err;
}

/* The rings are freed only if the reset worked (rdev->stopped) */
static void rnic_remove_dev(struct rnic_dev *rdev)
{
	struct pci_dev *pdev = rdev->pdev;

	rnic_dev_reset(rdev);
	rnic_aq_destroy(rdev);
	rnic_eq_destroy(rdev);
	rnic_irq_destroy(rdev);
	pci_clear_master(pdev);
	pci_iounmap(pdev, rdev->ivshmem);
	pci_release_region(pdev, RNIC_BAR_IVSHMEM);
	pci_iounmap(pdev, rdev->shm);
	pci_release_region(pdev, RNIC_BAR_SHM);
	pci_disable_device(pdev);
}

/* What event queue 0 hands up: each handler checks that its side is ready */
static const struct rnic_event_ops rnic_event_ops = {
	.link_change = rnic_netdev_link_change,
	.port_event = rnic_ib_port_event,
	.ib_event = rnic_ib_event,
	.dev_dead = rnic_ib_dev_dead,
};

static int rnic_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct rnic_dev *rdev;
	int err;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->pdev = pdev;
	rdev->event_ops = &rnic_event_ops;
	pci_set_drvdata(pdev, rdev);

	err = rnic_probe_dev(rdev);
	if (err)
		goto err_free;

	err = rnic_netdev_init(rdev, &rnic_ethtool_ops);
	if (err)
		goto err_remove_dev;
	WRITE_ONCE(rdev->netdev_ready, true);

	err = rnic_ib_register(rdev);
	if (err)
		goto err_netdev;
	WRITE_ONCE(rdev->ib_ready, true);

	rnic_info(rdev, "%s, ABI %u.%u, MAC %pM, %u MSI-X vectors, caps %#x, %u Mb/s; %s: roce_mode %u, RoCE v2 UDP port %u, PFC %s\n",
		  rdev->model_version, RNIC_ABI2_MAJOR, rdev->abi_minor,
		  rdev->mac, rdev->num_irqs,
		  rdev->caps, rdev->speed_mbps, netdev_name(rdev->netdev),
		  rnic_params.roce_mode, rnic_params.roce_udp_port,
		  rnic_params.pfc_prio == RNIC_PFC_OFF ? "off" : "on");
	return 0;

err_netdev:
	WRITE_ONCE(rdev->netdev_ready, false);
	flush_work(&rdev->eq.work);
	rnic_netdev_destroy(rdev);
err_remove_dev:
	rnic_remove_dev(rdev);
	/* after the reset: the device holds no memory of ours any more */
	rnic_ib_free(rdev);
err_free:
	kfree(rdev);
	return err;
}

static void rnic_remove(struct pci_dev *pdev)
{
	struct rnic_dev *rdev = pci_get_drvdata(pdev);

	/* no more events to the consumers once they start going away */
	WRITE_ONCE(rdev->ib_ready, false);
	WRITE_ONCE(rdev->netdev_ready, false);
	flush_work(&rdev->eq.work);

	/*
	 * The consumers free their rings as their DESTROY commands complete,
	 * or once the device is stopped. A device that stopped answering and
	 * did not reset then (rnic_dev_failed()) gets one more try: else all
	 * it was given is leaked.
	 */
	if (READ_ONCE(rdev->aq.dead) && !READ_ONCE(rdev->stopped))
		rnic_dev_stop(rdev);
	rnic_ib_unregister(rdev);
	rnic_netdev_destroy(rdev);
	rnic_remove_dev(rdev);
	rnic_ib_free(rdev);
	kfree(rdev);
}

static void rnic_shutdown(struct pci_dev *pdev)
{
	struct rnic_dev *rdev = pci_get_drvdata(pdev);

	/* stop DMA into guest memory before a kexec or reboot */
	if (rdev)
		rnic_dev_reset(rdev);
}

static const struct pci_device_id rnic_pci_tbl[] = {
	{ PCI_DEVICE(RNIC_PCI_VENDOR_ID, RNIC_PCI_DEVICE_ID) },
	{}
};
MODULE_DEVICE_TABLE(pci, rnic_pci_tbl);

static struct pci_driver rnic_pci_driver = {
	.name = DRV_MODULE_NAME,
	.id_table = rnic_pci_tbl,
	.probe = rnic_probe,
	.remove = rnic_remove,
	.shutdown = rnic_shutdown,
};

module_pci_driver(rnic_pci_driver);

MODULE_DESCRIPTION("RDMA (RoCE v1/ibd) driver for the rnic PCI NIC");
MODULE_AUTHOR("The rnic developers");
MODULE_LICENSE("Dual BSD/GPL");
