// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rnic: RDMA driver for the rnic RoCE PCI NIC.
 *
 * The NIC appears as an ivshmem-doorbell function (1af4:1110). That ID is
 * generic, so probe reads the signature block in BAR2 before it writes
 * anything and leaves any other ivshmem device alone.
 */
#include <linux/module.h>
#include <linux/pci.h>

#include "rnic.h"
#include "rnic_param.h"

/*
 * Read the signature block and decide whether this function is an rnic we
 * can drive. Reads only: a shared-memory device of another user must not
 * see a single write from us.
 */
static int rnic_read_sig(struct rnic_dev *rdev)
{
	struct device *dev = &rdev->pdev->dev;
	struct rnic_sig sig;

	if (rdev->shm_len < RNIC_SHM_MIN_SIZE) {
		dev_info(dev, "ivshmem BAR2 is %pa bytes, too small for an rnic; not binding\n",
			 &rdev->shm_len);
		return -ENODEV;
	}
	memcpy_fromio(&sig, rdev->shm + RNIC_SIG_OFF, sizeof(sig));
	if (!rnic_sig_compatible(le32_to_cpu(sig.magic),
				 le16_to_cpu(sig.abi_major))) {
		if (le32_to_cpu(sig.magic) == RNIC_SIG_MAGIC)
			dev_err(dev, "rnic ABI %u.%u is not supported by this driver (ABI %u.%u); update the rnic module\n",
				le16_to_cpu(sig.abi_major),
				le16_to_cpu(sig.abi_minor), RNIC_ABI_MAJOR,
				RNIC_ABI_MINOR);
		else
			dev_info(dev, "ivshmem device without rnic signature (%#010x); not binding\n",
				 le32_to_cpu(sig.magic));
		return -ENODEV;
	}

	rdev->caps = le32_to_cpu(sig.caps) & RNIC_CAP_ALL;
	rdev->num_msix = le16_to_cpu(sig.num_msix);
	rdev->max_frame = le32_to_cpu(sig.max_frame);
	rdev->speed_mbps = le32_to_cpu(sig.speed_mbps);
	ether_addr_copy(rdev->mac, sig.mac);
	strscpy(rdev->model_version, sig.model_version,
		sizeof(rdev->model_version));

	if (!is_valid_ether_addr(rdev->mac)) {
		dev_err(dev, "rnic reports invalid MAC %pM; not binding\n",
			rdev->mac);
		return -EINVAL;
	}
	return 0;
}

static int rnic_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct device *dev = &pdev->dev;
	struct rnic_dev *rdev;
	int err;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->pdev = pdev;

	err = pci_enable_device_mem(pdev);
	if (err) {
		dev_err(dev, "cannot enable PCI device: %d\n", err);
		goto err_free;
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

	pci_set_master(pdev);
	pci_set_drvdata(pdev, rdev);
	dev_info(dev, "%s, ABI %u.%u, MAC %pM, %u MSI-X vectors, caps %#x, roce_mode %u, RoCE v2 UDP port %u\n",
		 rdev->model_version, RNIC_ABI_MAJOR, RNIC_ABI_MINOR, rdev->mac,
		 rdev->num_msix, rdev->caps, rnic_params.roce_mode,
		 rnic_params.roce_udp_port);
	return 0;

err_release_ivshmem:
	pci_release_region(pdev, RNIC_BAR_IVSHMEM);
err_unmap_shm:
	pci_iounmap(pdev, rdev->shm);
err_release_shm:
	pci_release_region(pdev, RNIC_BAR_SHM);
err_disable:
	pci_disable_device(pdev);
err_free:
	kfree(rdev);
	return err;
}

static void rnic_remove(struct pci_dev *pdev)
{
	struct rnic_dev *rdev = pci_get_drvdata(pdev);

	pci_clear_master(pdev);
	pci_iounmap(pdev, rdev->ivshmem);
	pci_release_region(pdev, RNIC_BAR_IVSHMEM);
	pci_iounmap(pdev, rdev->shm);
	pci_release_region(pdev, RNIC_BAR_SHM);
	pci_disable_device(pdev);
	kfree(rdev);
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
};

module_pci_driver(rnic_pci_driver);

MODULE_DESCRIPTION("RDMA (RoCE v1/v2) driver for the rnic PCI NIC");
MODULE_AUTHOR("The rnic developers");
MODULE_LICENSE("Dual BSD/GPL");
