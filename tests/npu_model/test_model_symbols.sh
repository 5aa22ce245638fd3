#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# test_model_symbols.sh - every npu_model library above the driver has its
# real soname, a RUNPATH of $ORIGIN, and exports (nm -D, defined text) the
# real CANN / torch_npu / PyTorch entry points the probe table names; the
# C++ names demangle (c++filt) to the declarations of the reference; libopapi
# is not a NEEDED library of anything (torch_npu dlopens it).
set -u
OUT=${OUTPUT:-$(cd "$(dirname "$0")/../.." && pwd)/build}
LIB=$OUT/npu_model/lib
fail=0
bad() { echo "FAIL: $*"; fail=1; }

need() {	# need LIB SYMBOL...
	local lib=$LIB/$1 syms
	shift
	[ -f "$lib" ] || { bad "$lib missing"; return; }
	syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}')
	for s in "$@"; do
		grep -qxF -- "$s" <<<"$syms" || bad "$(basename "$lib") does not export $s"
	done
	readelf -d "$lib" | grep -q "Library soname: \[$(basename "$lib")\]" ||
		bad "$(basename "$lib"): soname"
	readelf -d "$lib" | grep -q 'Library runpath: \[\$ORIGIN\]' ||
		bad "$(basename "$lib"): runpath"
}

need libascendcl.so aclInit aclFinalize aclrtSetDevice aclrtResetDevice aclrtGetDevice \
	aclrtGetDeviceCount aclrtCreateStream aclrtCreateStreamWithConfig aclrtDestroyStream \
	aclrtSynchronizeStream aclrtStreamGetId aclrtStreamWaitEvent aclrtCreateEvent \
	aclrtCreateEventWithFlag aclrtRecordEvent aclrtSynchronizeEvent aclrtQueryEvent \
	aclrtQueryEventStatus aclrtEventElapsedTime aclrtDestroyEvent aclrtMalloc \
	aclrtMallocAlign32 \
	aclrtMallocHost aclrtFree aclrtFreeHost aclrtMemcpy aclrtMemcpyAsync aclrtMemset \
	aclrtGetMemInfo aclrtSynchronizeDevice aclrtLaunchKernel aclrtLaunchKernelWithHostArgs \
	aclrtBinaryLoadFromData aclrtBinaryGetFunction aclCreateTensorDesc aclCreateDataBuffer \
	aclopCreateAttr
need libacl_op_compiler.so aclopCompileAndExecute aclopCompileAndExecuteV2
need libnnopbase.so aclCreateTensor aclDestroyTensor aclCreateScalar aclDestroyScalar \
	aclCreateIntArray aclDestroyIntArray aclCreateTensorList aclDestroyTensorList \
	aclDestroyAclOpExecutor aclSetAclOpExecutorRepeatable
ops="Add Mul Addmm Matmul Relu Gelu Softmax LayerNorm Convolution Cast NpuFormatCast ApplyAdamWV2
	ForeachMulScalar GeluBackward SoftmaxBackward LayerNormBackward ConvolutionBackward
	ThresholdBackward ReduceSum Nonzero InplaceMuls InplaceAdds InplaceAddcmul InplaceAddcdiv
	Sqrt"
aclnn=()
for o in $ops; do aclnn+=("aclnn${o}GetWorkspaceSize" "aclnn$o"); done
need libopapi.so "${aclnn[@]}"
need libruntime.so rtSetDevice rtStreamCreate rtStreamDestroy rtStreamSynchronize rtGetStreamId \
	rtEventCreate rtEventRecord rtEventSynchronize rtDeviceSynchronize rtMalloc rtFree \
	rtMallocHost rtFreeHost rtMemcpy rtMemcpyAsync rtKernelLaunch rtsLaunchKernelWithHostArgs \
	rtFunctionRegister rtsFuncGetByName
# libtorch_npu.so, both the C workload's and the Python backend's, is built as the wheel ships
# (npu_model/README.md "Release build"): in torch_npu's namespaces it exports exactly the set
# below, what the real headers mark TORCH_NPU_API / C10_NPU_API;
# npu_* are the simulator's own C entry points.  No .symtab; the debug file is found by build-id
# under $OUT/npu_model/debug and by .gnu_debuglink in .debug/, and names the hidden functions.
RELEASE_EXPORTS="_ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb
_ZN6at_npu6native10custom_ops15npu_format_castERKN2at6TensorEl
_ZN7c10_npu19NPUCachingAllocator9allocatorE"
HIDDEN="_ZN7c10_npu10Repository7EnqueueEPv _ZN7c10_npu10Repository7DequeueEv
	_ZN6at_npu6native12AsncExecFuncEPv
	_ZN6at_npu6native13ExecFuncOpApiEPN7c10_npu5queue10QueueParasEPv
	_ZN9torch_npu8profiler29reportMemoryDataToNpuProfilerERKNS0_11MemoryUsageE
	_ZN7c10_npu18enCurrentNPUStreamEPvaPNS_9NPUStreamE"
build_id() { readelf -nW "$1" | sed -n 's/.*Build ID: *//p'; }
release_lib() {	# release_lib PATH
	local lib=$1 name got id dbg link
	name=${lib#"$OUT"/}
	[ -f "$lib" ] || { bad "$lib missing"; return; }
	got=$(nm -D --defined-only "$lib" |
	      awk '$3 ~ /^_ZN(6at_npu|7c10_npu|9torch_npu)/ {print $3}' | sort)
	[ "$got" = "$(sort <<<"$RELEASE_EXPORTS")" ] ||
		bad "$name exports in torch_npu's namespaces: $(diff <(echo "$got") \
		     <(sort <<<"$RELEASE_EXPORTS") | grep '^[<>]' | tr '\n' ' ')"
	nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' |
		grep -vE '^(_ZN(6at_npu|7c10_npu|9torch_npu)|npu_)' | grep -q . &&
		bad "$name exports strong text outside torch_npu and npu_*"
	readelf -SW "$lib" | grep -q ' \.symtab ' && bad "$name has a .symtab"
	id=$(build_id "$lib")
	[ -n "$id" ] || { bad "$name has no build-id"; return; }
	dbg=$OUT/npu_model/debug/.build-id/${id:0:2}/${id:2}.debug
	[ -f "$dbg" ] || { bad "$name: no debug file $dbg"; return; }
	[ "$(build_id "$dbg")" = "$id" ] || bad "$dbg: build-id differs from $name's"
	readelf -SW "$dbg" | grep -E ' \.text +NOBITS ' -q || bad "$dbg: .text is not NOBITS"
	link=$(readelf -W --string-dump=.gnu_debuglink "$lib" | sed -n 's/^ *\[ *0\] *//p')
	[ "$link" = "libtorch_npu.so.debug" ] || bad "$name: .gnu_debuglink '$link'"
	cmp -s "$dbg" "$(dirname "$lib")/.debug/$link" ||
		bad "$name: .debug/$link differs from $dbg"
	for s in $HIDDEN; do
		nm -D "$lib" | grep -qwF -- "$s" && bad "$name exports hidden $s"
		nm "$dbg" | grep -qE "^[0-9a-f]+ t $s\$" || bad "$dbg does not name $s (local text)"
	done
}
release_lib "$LIB/libtorch_npu.so"
release_lib "$OUT/npu_model/python/torch_npu/lib/libtorch_npu.so"
need libtorch_cpu.so _ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE \
	_ZN2at4_ops10mul_Tensor4callERKNS_6TensorES4_ _ZN2at4_ops2mm4callERKNS_6TensorES4_ \
	_ZN2at4_ops5addmm4callERKNS_6TensorES4_S4_RKN3c106ScalarES8_ \
	_ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE \
	_ZN2at4_ops8_softmax4callERKNS_6TensorElb

# The mangled names are what g++ makes of the real declarations.
dm=$(c++filt _ZN6at_npu6native9OpCommand10RunOpApiV2ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKSt8functionIFivEEb)
[ "$dm" = "at_npu::native::OpCommand::RunOpApiV2(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, std::function<int ()> const&, bool)" ] ||
	bad "RunOpApiV2 demangles to '$dm'"
dm=$(c++filt _ZN2at4_ops10add_Tensor4callERKNS_6TensorES4_RKN3c106ScalarE)
want="at::_ops::add_Tensor::call(at::Tensor const&, at::Tensor const&, c10::Scalar const&)"
[ "$dm" = "$want" ] ||
	bad "add_Tensor demangles to '$dm'"
n=$(nm -D --defined-only "$LIB/libtorch_cpu.so" |
	awk '$2 == "T" && $3 ~ /^_ZN2at4_ops.*4callE/' | wc -l)
[ "$n" -ge 25 ] || bad "libtorch_cpu.so exports only $n at::_ops::*::call entry points"

# libopapi is dlopen'ed, never NEEDED.
for l in "$LIB"/*.so; do
	readelf -d "$l" | grep -q 'NEEDED.*\[libopapi.so\]' &&
		bad "$(basename "$l") links libopapi.so"
done
readelf -d "$OUT/npu_model/bin/npu_train" | grep -q 'NEEDED.*\[libopapi.so\]' &&
	bad "npu_train links libopapi.so"

# No model library exports more than its API by accident: nothing static-looking.
for l in libascendcl.so libruntime.so libopapi.so; do
	while read -r s; do
		bad "$l exports unexpected $s"
	done < <(nm -D --defined-only "$LIB/$l" | awk '$2 == "T" {print $3}' |
		 grep -vE '^(acl|rt|npu_model_|_init|_fini)')
done

[ $fail -eq 0 ] && echo "all symbol checks passed"
exit $fail
