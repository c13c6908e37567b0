// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * snaa_doorbell: the doorbell device, /dev/snaa_doorbell (snaa-abi.h).
 *
 * A soft device's SQ doorbell is a system call for every batch a process
 * posts, and in a ping-pong it is on the path of every message.  Through
 * the uverbs ioctl (SNAA_IB_METHOD_SQ_DOORBELL) the core copies and
 * checks a header and an attribute array, looks up the method and
 * builds an attribute bundle before the driver sees the call: under TCG
 * about half of what the doorbell costs.  An ioctl on a file of the
 * driver's own reaches it at once, with the QP number as its argument.
 *
 * The file names no context by itself: the process binds it to its
 * uverbs context with SNAA_IB_METHOD_DOORBELL_BIND on the uverbs file,
 * which proves the context is the caller's.  A ring then finds only QPs
 * of that context.  A file binds one context and a context one file;
 * the binding ends when the file is closed or the context deallocated
 * (the process closed its uverbs file, or the device went away).
 *
 * Why a module of its own: an open file pins the module whose file
 * operations it uses, and snaa must unload while processes still hold
 * its devices (the RDMA core disassociates them).  The files are this
 * module's; snaa registers the rings behind them (struct snaa_db_ops)
 * and unregisters them when it unloads, after every context is gone,
 * so a file outliving snaa only answers ENOTCONN.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/srcu.h>

#include <uapi/rdma/snaa-abi.h>

#include "snaa_doorbell.h"

/**
 * struct snaa_db_file - an open doorbell file
 * @lock: held by a ring while it looks up a QP of @uctx, so that the
 *	context cannot unbind (and be freed) under it
 * @uctx: the bound context, or NULL; written under snaa_db_mutex and
 *	@lock
 * @slot: where the context points back at this file
 */
struct snaa_db_file {
	spinlock_t lock;		/* for @uctx, see above */
	struct snaa_ucontext *uctx;
	struct snaa_db_file **slot;
};

/* Bindings: snaa_db_file.uctx/.slot and what the slots point to. */
static DEFINE_MUTEX(snaa_db_mutex);

/* The registered rings; rings in progress hold snaa_db_srcu. */
static const struct snaa_db_ops __rcu *snaa_db_ops;
DEFINE_STATIC_SRCU(snaa_db_srcu);

/* End @db's binding, if any.  snaa_db_mutex held. */
static void snaa_db_unbind_file(struct snaa_db_file *db)
{
	lockdep_assert_held(&snaa_db_mutex);
	if (!db->uctx)
		return;
	spin_lock(&db->lock);
	db->uctx = NULL;
	spin_unlock(&db->lock);
	*db->slot = NULL;
	db->slot = NULL;
}

static int snaa_db_open(struct inode *inode, struct file *file)
{
	struct snaa_db_file *db;

	db = kzalloc(sizeof(*db), GFP_KERNEL_ACCOUNT);
	if (!db)
		return -ENOMEM;
	spin_lock_init(&db->lock);
	file->private_data = db;
	return nonseekable_open(inode, file);
}

static int snaa_db_release(struct inode *inode, struct file *file)
{
	struct snaa_db_file *db = file->private_data;

	mutex_lock(&snaa_db_mutex);
	snaa_db_unbind_file(db);
	mutex_unlock(&snaa_db_mutex);
	kfree(db);
	return 0;
}

static long snaa_db_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct snaa_db_file *db = file->private_data;
	const struct snaa_db_ops *ops;
	struct snaa_ucontext *uctx;
	struct snaa_qp *qp = NULL;
	int idx, err;

	if (cmd != SNAA_DOORBELL_RING)
		return -ENOTTY;
	if (arg > U32_MAX)
		return -EINVAL;

	idx = srcu_read_lock(&snaa_db_srcu);
	ops = srcu_dereference(snaa_db_ops, &snaa_db_srcu);
	spin_lock(&db->lock);
	uctx = db->uctx;
	if (uctx && ops)
		qp = ops->get_qp(uctx, arg);
	spin_unlock(&db->lock);
	if (!uctx || !ops)
		err = -ENOTCONN;
	else if (!qp)
		err = -EINVAL;
	else
		err = ops->ring(qp);
	srcu_read_unlock(&snaa_db_srcu, idx);
	return err;
}

static const struct file_operations snaa_db_fops = {
	.owner = THIS_MODULE,
	.open = snaa_db_open,
	.release = snaa_db_release,
	.unlocked_ioctl = snaa_db_ioctl,
	.compat_ioctl = snaa_db_ioctl,	/* the argument is a value */
};

static struct miscdevice snaa_db_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "snaa_doorbell",
	.fops = &snaa_db_fops,
	/* A file rings nothing until its opener binds its own context. */
	.mode = 0666,
};

/**
 * snaa_db_register() - register the rings behind the doorbell files
 * @ops: snaa's; must stay valid until snaa_db_unregister()
 *
 * Context: process.
 * Return: 0, or -EBUSY if rings are registered already.
 */
int snaa_db_register(const struct snaa_db_ops *ops)
{
	int err = 0;

	mutex_lock(&snaa_db_mutex);
	if (rcu_access_pointer(snaa_db_ops))
		err = -EBUSY;
	else
		rcu_assign_pointer(snaa_db_ops, ops);
	mutex_unlock(&snaa_db_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(snaa_db_register);

/**
 * snaa_db_unregister() - unregister the rings, once no context is bound
 * @ops: what snaa_db_register() registered
 *
 * Returns once no ring is running them any more.
 *
 * Context: process; sleeps.
 */
void snaa_db_unregister(const struct snaa_db_ops *ops)
{
	mutex_lock(&snaa_db_mutex);
	if (rcu_access_pointer(snaa_db_ops) == ops)
		RCU_INIT_POINTER(snaa_db_ops, NULL);
	mutex_unlock(&snaa_db_mutex);
	synchronize_srcu(&snaa_db_srcu);
}
EXPORT_SYMBOL_GPL(snaa_db_unregister);

/**
 * snaa_db_bind() - bind a doorbell file to a context
 * @fd: the caller's descriptor of the file
 * @uctx: the caller's context
 * @slot: the context's pointer to its bound file, NULL if none; set here,
 *	cleared when the binding ends
 *
 * Context: process (SNAA_IB_METHOD_DOORBELL_BIND).
 * Return: 0, -EBADF (@fd is no open file), -EINVAL (not the doorbell
 * device) or -EBUSY (the file or the context is bound already).
 */
int snaa_db_bind(int fd, struct snaa_ucontext *uctx,
		 struct snaa_db_file **slot)
{
	struct snaa_db_file *db;
	struct file *file;
	int err = 0;

	file = fget(fd);
	if (!file)
		return -EBADF;
	if (file->f_op != &snaa_db_fops) {
		fput(file);
		return -EINVAL;
	}
	db = file->private_data;
	mutex_lock(&snaa_db_mutex);
	if (db->uctx || *slot) {
		err = -EBUSY;
	} else {
		spin_lock(&db->lock);
		db->uctx = uctx;
		spin_unlock(&db->lock);
		db->slot = slot;
		*slot = db;
	}
	mutex_unlock(&snaa_db_mutex);
	/* May be the last reference (closed meanwhile): after the mutex. */
	fput(file);
	return err;
}
EXPORT_SYMBOL_GPL(snaa_db_bind);

/**
 * snaa_db_unbind() - end a context's binding, if it has one
 * @slot: the context's pointer to its bound file
 *
 * Rings that found no QP yet find none afterwards.  One that has found
 * its QP holds a reference, and the RDMA core destroys a context's QPs
 * (which waits for such references) before it deallocates the context.
 *
 * Context: process.
 */
void snaa_db_unbind(struct snaa_db_file **slot)
{
	mutex_lock(&snaa_db_mutex);
	if (*slot)
		snaa_db_unbind_file(*slot);
	mutex_unlock(&snaa_db_mutex);
}
EXPORT_SYMBOL_GPL(snaa_db_unbind);

module_misc_device(snaa_db_misc);

MODULE_AUTHOR("The snaa authors");
MODULE_DESCRIPTION("snaa: the doorbell device, /dev/snaa_doorbell");
MODULE_LICENSE("Dual BSD/GPL");
