// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * backend.cpp - torch_npu's device registration in Debian's real PyTorch
 * (1.13): the NPU as PyTorch's out-of-tree device PrivateUse1.
 *
 * Linked into the Python package's libtorch_npu.so together with the same
 * C modules the C workload's libtorch_npu.so has (task queue, caching
 * allocator, op plugin, profiler hooks), so a Python training script goes
 *   real dispatcher + autograd (libtorch_cpu.so)
 *     -> the PrivateUse1 kernels here
 *     -> op plugin (aclnnXxxGetWorkspaceSize, OpCommand::RunOpApiV2)
 *     -> task queue (Repository ring, acl_thread) -> aclnnXxx -> runtime
 *     -> HAL -> ioctls -> npu-modeld,
 * as torch_npu does.  Nothing computes: a tensor's storage is card memory
 * that no CPU code reads; shapes, strides and dtypes are right, because
 * each op's outputs are shaped by running the same op on PyTorch's Meta
 * device.
 *
 * One boxed fallback serves every aten op that reaches PrivateUse1: it
 * shapes the outputs on Meta (on CPU with zero-filled inputs for the few
 * ops that have no meta kernel), makes the outputs (views and in-place
 * results alias their inputs as the schema's alias annotations say), then
 * launches the op's aclnn kernel through the op plugin when the plugin
 * knows the op.  Ops it does not know run no kernel and are named once on
 * stderr, as torch_npu names an op it hands to the CPU.  The few kernels
 * that must own their storage (empty, views, copies, item()) are explicit.
 */
#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <atomic>
#include <memory>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include <unistd.h>

#define _Bool bool	/* the C headers' struct members */
#include "npu_acl.h"
#include "npu_journal.h"
#include "npu_torch.h"
#undef _Bool

extern "C" {
/* torch_npu/torch_npu_priv.h, C linkage (the header itself is C only) */
void *npu_alloc_malloc(size_t size, int device, void *stream);
void npu_alloc_free(void *ptr);
void *npu_queue_current_stream(void);
int npu_plugin_device(void);
}

namespace {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;
const struct npu_aten_backend *g_backend;	/* the op plugin, registered by its constructor */
thread_local int g_last_error;
/*
 * The current device is per thread, as CANN's device context is (and
 * torch_npu's current device): PyTorch's autograd engine starts one thread
 * per device and sets each thread's device once, which must not move the
 * training thread's (a process-wide device made rank 1's backward allocate
 * on card 0).  A thread that set none has the process's: the device
 * torch.npu.set_device bound (npu_torch_init).
 */
thread_local int t_device = -1;

int cur_device()
{
	return t_device >= 0 ? t_device : npu_plugin_device();
}

/* The device an allocation in this scope is for (a factory's device= argument, say). */
struct AllocDevice {
	int old;
	explicit AllocDevice(c10::optional<c10::Device> d) : old(t_device)
	{
		if (d && d->type() == c10::DeviceType::PrivateUse1 && d->has_index())
			t_device = d->index();
	}
	~AllocDevice() { t_device = old; }
};

/* ---- storage: the caching allocator ---- */

void npu_delete(void *p)
{
	if (p)
		npu_alloc_free(p);
}

/* torch_npu's format_size(): bytes, KiB, MiB, GiB with two decimals. */
std::string format_size(uint64_t n)
{
	char b[64];

	if (n <= 1024)
		std::snprintf(b, sizeof(b), "%llu bytes", (unsigned long long)n);
	else if (n <= 1048576)
		std::snprintf(b, sizeof(b), "%.2f KiB", n / 1024.0);
	else if (n <= 1073741824ull)
		std::snprintf(b, sizeof(b), "%.2f MiB", n / 1048576.0);
	else
		std::snprintf(b, sizeof(b), "%.2f GiB", n / 1073741824.0);
	return b;
}

/*
 * An allocation that failed after the allocator released its cache and
 * retried (allocator.c): torch_npu raises c10::OutOfMemoryError (Python:
 * torch.cuda.OutOfMemoryError in PyTorch 1.13, torch.OutOfMemoryError in 2.x,
 * a RuntimeError either way) with this message.  Any other error (a bad
 * request) is a plain error with the ACL code.
 */
[[noreturn]] void out_of_memory(size_t n, int dev)
{
	const int err = npu_torch_alloc_last_error();
	struct npu_alloc_stats st;
	size_t free_b = 0, total_b = 0;

	TORCH_CHECK(err == ACL_ERROR_RT_MEMORY_ALLOCATION, "NPU allocation of ", n,
		    " bytes failed with error ", err);
	npu_torch_alloc_stats(&st);
	aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b);
	TORCH_CHECK_WITH(OutOfMemoryError, false, "NPU out of memory. Tried to allocate ",
			 format_size(n), " (NPU ", dev, "; ", format_size(total_b),
			 " total capacity; ", format_size(st.allocated), " already allocated; ",
			 format_size(st.active), " current active; ", format_size(free_b),
			 " free; ", format_size(st.reserved), " reserved in total by PyTorch)");
}

struct NpuAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t n) const override
	{
		int dev = cur_device();
		void *p = nullptr;

		if (n) {
			p = npu_alloc_malloc(n, dev, npu_queue_current_stream());
			if (!p)
				out_of_memory(n, dev);
		}
		return {p, p, &npu_delete, c10::Device(kNpu, (c10::DeviceIndex)dev)};
	}
	c10::DeleterFnPtr raw_deleter() const override { return &npu_delete; }
};
NpuAllocator g_alloc;

struct NpuGuard final : c10::impl::DeviceGuardImplInterface {
	c10::DeviceType type() const override { return kNpu; }
	c10::Device exchangeDevice(c10::Device d) const override
	{
		c10::Device old = getDevice();
		setDevice(d);
		return old;
	}
	c10::Device getDevice() const override
	{
		return c10::Device(kNpu, (c10::DeviceIndex)cur_device());
	}
	/*
	 * The device context is per thread in CANN: a thread PyTorch binds to
	 * the NPU (the autograd engine's device thread, say) gets aclrtSetDevice
	 * once, as torch_npu's guard does.
	 */
	void setDevice(c10::Device d) const override
	{
		static thread_local int bound = -1;

		if (d.index() < 0)
			return;
		if (bound != d.index() && aclrtSetDevice(d.index()) == 0)
			bound = d.index();
		t_device = d.index();
	}
	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		if (d.index() >= 0)
			t_device = d.index();
	}
	c10::Stream getStream(c10::Device d) const noexcept override
	{
		return c10::Stream(c10::Stream::DEFAULT, d);
	}
	c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
	c10::DeviceIndex deviceCount() const noexcept override
	{
		uint32_t n = 0;

		return aclrtGetDeviceCount(&n) ? 0 : (c10::DeviceIndex)n;
	}
};

/* ---- tensors as the op plugin sees them ---- */

aclDataType acl_dtype(c10::ScalarType t)
{
	switch (t) {
	case c10::kFloat: return ACL_FLOAT;
	case c10::kHalf: return ACL_FLOAT16;
	case c10::kBFloat16: return ACL_BF16;
	case c10::kDouble: return ACL_DOUBLE;
	case c10::kChar: return ACL_INT8;
	case c10::kByte: return ACL_UINT8;
	case c10::kShort: return ACL_INT16;
	case c10::kInt: return ACL_INT32;
	case c10::kLong: return ACL_INT64;
	case c10::kBool: return ACL_BOOL;
	default: return ACL_DT_UNDEFINED;
	}
}

/* A plugin view of one PyTorch tensor; lives as long as the op call. */
struct PluginTensor {
	struct npu_tensor_impl impl;
	struct at_tensor t;

	explicit PluginTensor(const at::Tensor &x)
	{
		std::memset(&impl, 0, sizeof(impl));
		impl.refcount = 1;
		impl.ndim = (int)std::min<int64_t>(x.dim(), NPU_TENSOR_MAX_DIMS);
		for (int d = 0; d < impl.ndim; d++)
			impl.sizes[d] = x.size(d);
		impl.dtype = acl_dtype(x.scalar_type());
		impl.format = impl.ndim == 4 ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
		impl.device = x.device().index();
		impl.data = x.data_ptr();
		impl.nbytes = x.nbytes();
		t.impl = &impl;
	}
};

/*
 * One op-plugin call: the plugin's op name, which of the aten op's tensor
 * arguments are its inputs, which returns its outputs, and its scalars.
 */
struct PluginCall {
	const char *op;
	std::vector<at::Tensor> ins, outs;
	std::vector<double> x;
};

double scalar_arg(const c10::IValue &v, double def)
{
	if (v.isScalar())
		return v.toScalar().toDouble();
	if (v.isInt())
		return (double)v.toInt();
	if (v.isDouble())
		return v.toDouble();
	return def;
}

at::Tensor tensor_arg(const std::vector<c10::IValue> &a, size_t i)
{
	return i < a.size() && a[i].isTensor() ? a[i].toTensor() : at::Tensor();
}

bool is_npu_tensor(const c10::IValue &v)
{
	return v.isTensor() && v.toTensor().defined() && v.toTensor().device().type() == kNpu;
}

/*
 * aten op -> op-plugin call, from the op's base name (functional, in-place
 * `op_` and `.out` variants alike), its original arguments and the outputs
 * made for the call (for in-place and out variants: the written argument).
 * False: the plugin has no kernel for it.
 */
bool plugin_call(const std::string &name, const std::vector<c10::IValue> &a,
		 const std::vector<at::Tensor> &outs, PluginCall &c)
{
	const size_t ns = name.find("::");
	std::string base = name.substr(ns == std::string::npos ? 0 : ns + 2);

	base = base.substr(0, base.find('.'));
	const bool inplace = base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_';
	const bool tensor_other = a.size() > 1 && is_npu_tensor(a[1]);
	auto T = [&](size_t i) { return tensor_arg(a, i); };
	auto X = [&](size_t i, double def) { return i < a.size() ? scalar_arg(a[i], def) : def; };

	if (inplace)
		base.pop_back();
	c.outs = outs;
	if ((base == "add" || base == "mul") && tensor_other) {
		c.op = base == "add" ? "add" : "mul";
		c.ins = {T(0), T(1)};
		if (base == "add")
			c.x = {X(2, 1.0)};
	} else if ((base == "add" || base == "mul") && !outs.empty() && a.size() > 1 &&
		   a[1].isTensor() && a[1].toTensor().defined() && a[1].toTensor().is_cpu() &&
		   a[1].toTensor().dim() == 0) {
		/*
		 * tensor op a Python number (PyTorch passes a wrapped 0-d CPU tensor):
		 * torch_npu's Adds / Muls.  The plugin has the in-place kernels only:
		 * an out-of-place call runs the in-place one on its output (same kernel).
		 */
		const double v = a[1].toTensor().item<double>();

		c.op = base == "add" ? "add_scalar_" : "mul_scalar_";
		c.ins = {outs[0]};
		c.x = base == "add" ? std::vector<double>{v, X(2, 1.0)} : std::vector<double>{v};
		c.outs.clear();
	} else if ((base == "add" || base == "mul") && inplace) {
		/* tensor op= scalar: the plugin's in-place Adds / Muls */
		c.op = base == "add" ? "add_scalar_" : "mul_scalar_";
		c.ins = {T(0)};
		c.x = base == "add" ? std::vector<double>{X(1, 0.0), X(2, 1.0)} :
				      std::vector<double>{X(1, 1.0)};
		c.outs.clear();
	} else if (base == "addmm") {
		c.op = "addmm";
		c.ins = {T(0), T(1), T(2)};
		c.x = {X(3, 1.0), X(4, 1.0)};
	} else if (base == "mm" || base == "bmm") {
		c.op = "mm";
		c.ins = {T(0), T(1)};
	} else if (base == "relu" || base == "gelu" || base == "sqrt" || base == "sum") {
		c.op = base == "relu" ? "relu" : base == "gelu" ? "gelu" : base == "sqrt" ? "sqrt" :
		       "sum";
		c.ins = {T(0)};
		if (inplace)
			c.outs = {T(0)};
	} else if (base == "threshold_backward") {
		c.op = "threshold_backward";
		c.ins = {T(0), T(1)};
		c.x = {X(2, 0.0)};
	} else if (base == "gelu_backward") {
		c.op = "gelu_backward";
		c.ins = {T(0), T(1)};
	} else if (base == "_softmax") {
		c.op = "softmax";
		c.ins = {T(0)};
		c.x = {X(1, -1)};
	} else if (base == "_softmax_backward_data") {
		c.op = "softmax_backward";
		c.ins = {T(0), T(1)};
		c.x = {X(2, -1)};
	} else if ((base == "addcmul" || base == "addcdiv") && !outs.empty()) {
		/*
		 * The plugin has the in-place kernels only: a functional or out
		 * variant runs as the in-place one on its output (same kernel).
		 */
		c.op = base == "addcmul" ? "addcmul_" : "addcdiv_";
		c.ins = {outs[0], T(1), T(2)};
		c.x = {X(3, 1.0)};
		c.outs.clear();
	} else if (base == "_to_copy" && !outs.empty() && T(0).defined() &&
		   outs[0].scalar_type() != T(0).scalar_type()) {
		c.op = "cast";
		c.ins = {T(0)};
		c.x = {(double)acl_dtype(outs[0].scalar_type())};
	} else {
		return false;
	}
	for (const at::Tensor &t : c.ins)
		if (!t.defined() || t.device().type() != kNpu)
			return false;	/* a CPU scalar tensor operand: no NPU kernel here */
	return true;
}

/* Runs a plugin call; throws as torch_npu's kernels throw on an aclnn error. */
void plugin_run(const std::string &name, PluginCall &c)
{
	std::vector<PluginTensor> in, out;
	std::vector<const struct at_tensor *> inp;
	std::vector<struct at_tensor> outv;
	int r;

	in.reserve(c.ins.size());
	out.reserve(c.outs.size());
	for (const at::Tensor &t : c.ins)
		in.emplace_back(t);
	for (const at::Tensor &t : c.outs)
		out.emplace_back(t);
	for (PluginTensor &p : in)
		inp.push_back(&p.t);
	for (PluginTensor &p : out)
		outv.push_back(p.t);
	TORCH_CHECK(g_backend, "torch_npu: the op plugin did not register");
	r = g_backend->op(c.op, outv.data(), (int)outv.size(), inp.data(), (int)inp.size(),
			  c.x.data(), (int)c.x.size());
	TORCH_CHECK(r == 0, name, ": NPU kernel failed with error ", r);
}

void journal_op(const std::string &name, uint64_t t0, int ret)
{
	if (npu_journal_on)
		npu_journal_write("api", "tid=%d\tlayer=framework\tname=%s\tt0=%llu\tt1=%llu"
				  "\tret=%d\top=%s", (int)gettid(), name.c_str(),
				  (unsigned long long)t0, (unsigned long long)npu_now_ns(), ret,
				  name.c_str());
}

void note_host_op(const std::string &name)
{
	static std::mutex lock;
	static std::set<std::string> seen;
	std::lock_guard<std::mutex> g(lock);

	if (seen.insert(name).second)
		std::fprintf(stderr, "torch_npu: %s has no NPU kernel in npu_model: "
			     "shapes only, no task\n", name.c_str());
}

/* ---- the fallback ---- */

bool on_npu(const at::Tensor &t)
{
	return t.defined() && t.device().type() == kNpu;
}

at::Tensor shadow(const at::Tensor &t, c10::Device dev)
{
	at::Tensor s = at::empty_strided(t.sizes(), t.strides(), t.options().device(dev));

	if (dev.is_cpu())
		s.zero_();
	return s;
}

/*
 * Replaces every NPU tensor argument on the stack by a Meta (or CPU) shadow,
 * and keeps a reference to each in keep: an out= kernel called boxed returns
 * references to its out arguments after the stack has dropped them, so
 * something else must hold the shadows until the results are read.
 */
void shadow_args(torch::jit::Stack *stack, size_t nargs, c10::Device dev,
		 std::vector<at::Tensor> &keep)
{
	auto sh = [&](const at::Tensor &t) {
		keep.push_back(shadow(t, dev));
		return keep.back();
	};

	for (size_t i = 0; i < nargs; i++) {
		c10::IValue &a = (*stack)[stack->size() - nargs + i];

		if (a.isTensor() && on_npu(a.toTensor())) {
			a = sh(a.toTensor());
		} else if (a.isTensorList()) {
			c10::List<at::Tensor> l;

			for (const at::Tensor &t : a.toTensorList())
				l.push_back(on_npu(t) ? sh(t) : t);
			a = l;
		} else if (a.isOptionalTensorList()) {
			c10::List<c10::optional<at::Tensor>> l;

			for (const c10::optional<at::Tensor> &t : a.toOptionalTensorList())
				l.push_back(t && on_npu(*t) ? c10::optional<at::Tensor>(sh(*t)) : t);
			a = l;
		}
	}
}

/* The argument whose alias set a return shares, or -1. */
int aliased_arg(const c10::FunctionSchema &s, const c10::AliasInfo *ret)
{
	for (size_t j = 0; j < s.arguments().size(); j++) {
		const c10::AliasInfo *ai = s.arguments()[j].alias_info();

		if (ai && ai->beforeSets() == ret->beforeSets())
			return (int)j;
	}
	return -1;
}

/* The NPU tensor standing for shaped output m of the call. */
at::Tensor make_output(const at::Tensor &m, const c10::AliasInfo *alias,
		       const c10::FunctionSchema &s, const std::vector<c10::IValue> &orig)
{
	int j = alias ? aliased_arg(s, alias) : -1;

	if (j >= 0 && orig[j].isTensor()) {
		at::Tensor in = orig[j].toTensor();

		if (alias->isWrite()) {
			if (in.sizes() != m.sizes())
				in.resize_(m.sizes());
			return in;
		}
		return in.as_strided(m.sizes(), m.strides(), m.storage_offset());
	}
	/* a new output is on its inputs' card, as a kernel's (not the thread's current one) */
	c10::DeviceIndex dev = (c10::DeviceIndex)cur_device();

	for (const c10::IValue &v : orig)
		if (is_npu_tensor(v)) {
			dev = v.toTensor().device().index();
			break;
		}
	AllocDevice scope(c10::Device(kNpu, dev));

	return at::empty_strided(m.sizes(), m.strides(), m.options().device(c10::Device(kNpu, dev)));
}

void npu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const c10::FunctionSchema &s = op.schema();
	const size_t nargs = s.arguments().size(), nret = s.returns().size();
	const std::string name = s.operator_name().overload_name.empty() ?
		s.operator_name().name : s.operator_name().name + "." + s.operator_name().overload_name;
	std::vector<c10::IValue> orig(stack->end() - nargs, stack->end());
	std::vector<c10::IValue> st;
	std::vector<at::Tensor> outs, keep;
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;
	PluginCall call;

	st = orig;
	shadow_args(&st, nargs, c10::Device(c10::kMeta), keep);
	try {
		op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::Meta), &st);
	} catch (const c10::Error &) {
		/* no meta kernel: shape on CPU from zero-filled copies of the inputs */
		st = orig;
		shadow_args(&st, nargs, c10::Device(c10::kCPU), keep);
		op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &st);
	}
	TORCH_CHECK(st.size() == nret, name, ": ", st.size(), " results, schema says ", nret);
	torch::jit::drop(*stack, nargs);
	stack->insert(stack->end(), st.begin(), st.end());
	for (size_t i = 0; i < nret; i++) {
		c10::IValue &r = (*stack)[stack->size() - nret + i];
		const c10::AliasInfo *alias = s.returns()[i].alias_info();

		if (r.isTensor()) {
			r = make_output(r.toTensor(), alias, s, orig);
			outs.push_back(r.toTensor());
		} else if (r.isTensorList()) {
			c10::List<at::Tensor> l;

			for (const at::Tensor &m : r.toTensorList())
				l.push_back(make_output(m, alias, s, orig));
			r = l;
		}
	}
	if (plugin_call(name, orig, outs, call))
		plugin_run(name, call);
	else
		note_host_op(name);
	journal_op(name, t0, 0);
}

/* ---- explicit kernels ---- */

c10::ScalarType torch_dtype(aclDataType t)
{
	switch (t) {
	case ACL_FLOAT16: return c10::kHalf;
	case ACL_BF16: return c10::kBFloat16;
	case ACL_DOUBLE: return c10::kDouble;
	case ACL_INT8: return c10::kChar;
	case ACL_UINT8: return c10::kByte;
	case ACL_INT16: return c10::kShort;
	case ACL_INT32: return c10::kInt;
	case ACL_INT64: return c10::kLong;
	case ACL_BOOL: return c10::kBool;
	default: return c10::kFloat;
	}
}

struct OwnedTensor {
	at::Tensor t;
	std::unique_ptr<PluginTensor> view;
};
thread_local std::unique_ptr<OwnedTensor> t_made; /* npu_tensor_empty's last output */

/*
 * torch_npu.npu_format_cast(self, acl_format): the op plugin's exported
 * at_npu::native::custom_ops::npu_format_cast (one TransData kernel through
 * the aclop path), on a real tensor.  Model simplification: the storage
 * format is not kept with the tensor (torch_npu's NPUStorageDesc), so every
 * call casts from the base format (ND, NCHW for 4-d) and runs TransData.
 */
at::Tensor npu_format_cast_op(const at::Tensor &self, int64_t acl_format)
{
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;
	TORCH_CHECK(on_npu(self), "npu_format_cast: the tensor must be on the NPU");
	at::Tensor src = self.contiguous();
	PluginTensor in(src);
	struct at_tensor ret = {nullptr};
	at::Tensor out;

	t_made.reset();
	NPU_FORMAT_CAST(&ret, &in.t, acl_format);
	if (ret.impl && t_made && ret.impl == &t_made->view->impl)
		out = t_made->t;
	else if (ret.impl == &in.impl)
		out = src;
	t_made.reset();
	const int err = npu_aten_last_error();
	TORCH_CHECK(out.defined() && !err, "npu_format_cast: NPU error ", err);
	journal_op("torch_npu::npu_format_cast", t0, 0);
	return out;
}

at::Tensor npu_empty(c10::IntArrayRef size, c10::optional<at::ScalarType> dtype,
		     c10::optional<at::Layout>, c10::optional<at::Device> dev, c10::optional<bool>,
		     c10::optional<at::MemoryFormat> mf)
{
	AllocDevice scope(dev);

	return at::detail::empty_generic(size, &g_alloc, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
					 c10::dtype_or_default(dtype), mf);
}

at::Tensor npu_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride,
			     c10::optional<at::ScalarType> dtype, c10::optional<at::Layout>,
			     c10::optional<at::Device> dev, c10::optional<bool>)
{
	AllocDevice scope(dev);

	return at::detail::empty_strided_generic(size, stride, &g_alloc,
						 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
						 c10::dtype_or_default(dtype));
}

at::Tensor npu_as_strided(const at::Tensor &self, c10::IntArrayRef size, c10::IntArrayRef stride,
			  c10::optional<int64_t> off)
{
	return at::native::as_strided_tensorimpl(self, size, stride, off);
}

at::Tensor npu_view(const at::Tensor &self, c10::IntArrayRef size)
{
	return at::native::view(self, size);
}

at::Tensor npu_reshape_alias(const at::Tensor &self, c10::IntArrayRef size, c10::IntArrayRef stride)
{
	return at::native::_reshape_alias(self, size, stride);
}

/*
 * resize_: new sizes, contiguous strides, and a larger card buffer when the
 * storage is too small.  Never PyTorch's CPU resize, which copies the old
 * bytes with memcpy: card addresses are not host memory.
 */
const at::Tensor &npu_resize(const at::Tensor &self, c10::IntArrayRef size,
			     c10::optional<at::MemoryFormat>)
{
	c10::TensorImpl *impl = self.unsafeGetTensorImpl();
	size_t need;

	impl->set_sizes_contiguous(size);
	need = (size_t)(impl->storage_offset() + impl->numel()) * self.dtype().itemsize();
	if (impl->numel() && impl->storage().nbytes() < need) {
		c10::Storage st = impl->storage();

		st.set_data_ptr_noswap(g_alloc.allocate(need));
		st.set_nbytes(need);
	}
	return self;
}

/*
 * torch_npu's copy_: host to card is one MemcpyAsync task through the task
 * queue; card to host and card to card copy nothing the model keeps (no
 * data lives on the card), so the host side reads zeros.
 */
at::Tensor npu_copy_from(const at::Tensor &self, const at::Tensor &dst, bool non_blocking)
{
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;

	if (self.device().is_cpu() && on_npu(dst)) {
		at::Tensor src = self.contiguous();
		PluginTensor d(dst);
		int r = npu_torch_copy_h2d(&d.t, src.data_ptr(), src.nbytes(),
					   npu_torch_current_stream());

		TORCH_CHECK(r == 0, "copy to NPU failed with error ", r);
		if (!non_blocking)
			npu_torch_synchronize();
	} else if (on_npu(self) && dst.device().is_cpu()) {
		npu_torch_synchronize();
		dst.zero_();
	}
	journal_op("aten::_copy_from", t0, 0);
	return dst;
}

at::Tensor npu_copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
	if (dst.sizes() != self.sizes())
		dst.resize_(self.sizes());
	return npu_copy_from(self, dst, false);
}

/*
 * tensor.item(): waits for the card as torch_npu's D2H copy does.  The
 * model computes no values: the result is a placeholder that decreases
 * slowly with each call, so a loss curve printed by a script looks alive.
 */
at::Scalar npu_local_scalar(const at::Tensor &self)
{
	static std::atomic<uint64_t> calls{0};

	npu_torch_synchronize();
	if (c10::isIntegralType(self.scalar_type(), true))
		return at::Scalar((int64_t)0);
	return at::Scalar(2.0 / (1.0 + 0.01 * (double)calls.fetch_add(1)));
}

/*
 * Convolution: PyTorch hands a backend that is not CPU/CUDA to
 * convolution_overrideable, which has no meta kernel, so the shapes are
 * computed here (symmetric stride and padding, as the op plugin takes them).
 */
int64_t conv_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
	return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

at::Tensor npu_convolution(const at::Tensor &input, const at::Tensor &weight,
			   const c10::optional<at::Tensor> &bias, c10::IntArrayRef stride,
			   c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
			   c10::IntArrayRef output_padding, int64_t groups)
{
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;
	std::vector<int64_t> size = {input.size(0), weight.size(0)};
	PluginCall c;

	TORCH_CHECK(!transposed && groups == 1 && input.dim() == 4,
		    "npu_model: only 2-d, ungrouped, non-transposed convolution");
	(void)output_padding;
	for (int d = 0; d < 2; d++)
		size.push_back(conv_out_size(input.size(2 + d), weight.size(2 + d), stride[d],
					     padding[d], dilation[d]));
	at::Tensor out = at::empty(size, input.options());

	c.op = "convolution";
	c.ins = {input, weight};
	if (bias && bias->defined())
		c.ins.push_back(*bias);
	c.outs = {out};
	c.x = {(double)stride[0], (double)padding[0]};
	plugin_run("aten::convolution_overrideable", c);
	journal_op("aten::convolution_overrideable", t0, 0);
	return out;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
npu_convolution_backward(const at::Tensor &grad_output, const at::Tensor &input,
			 const at::Tensor &weight, c10::IntArrayRef stride,
			 c10::IntArrayRef padding, c10::IntArrayRef dilation, bool transposed,
			 c10::IntArrayRef output_padding, int64_t groups,
			 std::array<bool, 3> mask)
{
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;
	at::Tensor gi = at::empty(input.sizes(), input.options());
	at::Tensor gw = at::empty(weight.sizes(), weight.options());
	at::Tensor gb = at::empty({weight.size(0)}, weight.options());
	PluginCall c;

	(void)dilation;
	(void)transposed;
	(void)output_padding;
	(void)groups;
	c.op = "convolution_backward";
	c.ins = {grad_output, input, weight};
	c.outs = {gi, gw, gb};
	c.x = {(double)stride[0], (double)padding[0]};
	plugin_run("aten::convolution_backward_overrideable", c);
	journal_op("aten::convolution_backward_overrideable", t0, 0);
	return {mask[0] ? gi : at::Tensor(), mask[1] ? gw : at::Tensor(),
		mask[2] ? gb : at::Tensor()};
}

/*
 * torch_npu.npu_apply_adam_w: AdamW on one parameter in one kernel
 * (aclnnApplyAdamWV2), what torch_npu's fused optimizers launch per
 * parameter instead of the five to eight elementwise kernels of
 * torch.optim's per-parameter AdamW.  step is a 0-d NPU tensor.
 */
void npu_apply_adam_w(const at::Tensor &var, const at::Tensor &m, const at::Tensor &v,
		      const at::Tensor &grad, const at::Tensor &step, double lr, double beta1,
		      double beta2, double weight_decay, double eps)
{
	uint64_t t0 = npu_journal_on ? npu_now_ns() : 0;
	PluginCall c;

	c.op = "apply_adamw";
	c.ins = {var, m, v, grad, step};
	c.x = {lr, beta1, beta2, weight_decay, eps};
	for (const at::Tensor &t : c.ins)
		TORCH_CHECK(on_npu(t), "npu_apply_adam_w: every tensor must be on the NPU");
	plugin_run("torch_npu::npu_apply_adam_w", c);
	journal_op("torch_npu::npu_apply_adam_w", t0, 0);
}

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_alloc);
C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuard);

TORCH_LIBRARY(torch_npu, m)
{
	m.def("npu_format_cast(Tensor self, int acl_format) -> Tensor");
	m.def("npu_apply_adam_w(Tensor(a!) var, Tensor(b!) m, Tensor(c!) v, Tensor grad, "
	      "Tensor step, float lr, float beta1, float beta2, float weight_decay, float eps) -> ()");
}

TORCH_LIBRARY_IMPL(torch_npu, PrivateUse1, m)
{
	m.impl("npu_apply_adam_w", npu_apply_adam_w);
	m.impl("npu_format_cast", npu_format_cast_op);
}

/* An optimizer update has no backward: autograd passes it through (PyTorch 1.13 has no default). */
TORCH_LIBRARY_IMPL(torch_npu, AutogradPrivateUse1, m)
{
	m.impl("npu_apply_adam_w", torch::CppFunction::makeFallthrough());
	/* its gradient passes through: torch_npu.npu_format_cast's autograd.Function */
	m.impl("npu_format_cast", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&npu_fallback>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", npu_empty);
	m.impl("empty_strided", npu_empty_strided);
	m.impl("as_strided", npu_as_strided);
	m.impl("view", npu_view);
	m.impl("_reshape_alias", npu_reshape_alias);
	m.impl("resize_", npu_resize);
	m.impl("_copy_from", npu_copy_from);
	m.impl("_copy_from_and_resize", npu_copy_from_and_resize);
	m.impl("_local_scalar_dense", npu_local_scalar);
	m.impl("convolution_overrideable", npu_convolution);
	m.impl("convolution_backward_overrideable", npu_convolution_backward);
}

/*
 * What the C workload's libtorch_cpu.so gives the op plugin; here real
 * PyTorch is the framework, so these are the thin equivalents.
 */
extern "C" {

int npu_aten_register_backend(const struct npu_aten_backend *b)
{
	g_backend = b;
	return 0;
}

int npu_aten_last_error(void)
{
	int e = g_last_error;

	g_last_error = 0;
	return e;
}

void npu_aten_set_error(int err)
{
	g_last_error = err;
}

/* Real autograd numbers and links the ops; the model's own engine hooks do nothing here. */
void npu_autograd_register_device_init(int (*fn)(void))
{
	(void)fn;
}

int64_t npu_autograd_op_enter(void)
{
	return -1;
}

void npu_autograd_op_exit(void)
{
}

/*
 * The output tensor of the op plugin's npu_format_cast: a real NPU tensor of
 * the allocator, held by this thread's OwnedTensor until npu_format_cast_op
 * takes it.
 */
struct at_tensor npu_tensor_empty(const int64_t *sizes, int ndim, aclDataType dtype, int device)
{
	struct at_tensor r = {nullptr};

	try {
		std::unique_ptr<OwnedTensor> o(new OwnedTensor());

		o->t = at::empty(c10::IntArrayRef(sizes, (size_t)ndim),
				 at::TensorOptions().dtype(torch_dtype(dtype))
					 .device(c10::Device(kNpu, (c10::DeviceIndex)device)));
		o->view.reset(new PluginTensor(o->t));
		t_made = std::move(o);
		r.impl = &t_made->view->impl;
	} catch (const c10::OutOfMemoryError &) {
		g_last_error = ACL_ERROR_RT_MEMORY_ALLOCATION;
	} catch (const c10::Error &) {
		g_last_error = ACL_ERROR_FAILURE;
	}
	return r;
}

struct at_tensor npu_tensor_ref(const struct at_tensor *t)
{
	return *t;
}

void npu_tensor_share_grad_fn(struct at_tensor *,
								     const struct at_tensor *)
{
}

}  // extern "C"
