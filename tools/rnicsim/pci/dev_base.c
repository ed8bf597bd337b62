// SPDX-License-Identifier: GPL-2.0
/*
 * rnicsim device model: the bottom of the PCI function, which every other
 * dev_*.c file may call and which calls none of them: BAR2 access, the
 * port's defaults, and handing TX work to the packet scheduler (the
 * engine's). PFC restarts TX when a pause ends, and TX asks PFC whether a
 * priority is paused: with rdev_tx_all() here neither calls the other's
 * file.
 */
#include <string.h>

#include "pci/dev_priv.h"

u32 rdev_bar_read(struct rdev *d, unsigned int off)
{
	__le32 *p = (__le32 *)(d->bar2 + off);

	return le32_to_cpu(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

u16 rdev_bar_read16(struct rdev *d, unsigned int off)
{
	__le16 *p = (__le16 *)(d->bar2 + off);

	return le16_to_cpu(__atomic_load_n(p, __ATOMIC_ACQUIRE));
}

void rdev_bar_write(struct rdev *d, unsigned int off, u32 val)
{
	__le32 *p = (__le32 *)(d->bar2 + off);

	__atomic_store_n(p, cpu_to_le32(val), __ATOMIC_RELEASE);
}

void rdev_port_defaults(struct rdev *d)
{
	struct rdev_port *port = &d->port;

	memset(port, 0, sizeof(*port));
	port->mtu = RNIC_DEFAULT_MTU;
	port->udp_port = RNIC_DEFAULT_UDP_PORT;
	memcpy(port->mac, d->cfg.mac, sizeof(port->mac));
}

/*
 * Transmit what every usable TX queue has posted (doorbell 3, unpause):
 * the rings take turns with the QPs, packet by packet.
 */
void rdev_tx_all(struct rdev *d)
{
	if (!d->enabled)
		return;
	d->engine->eth_tx(d);
}
