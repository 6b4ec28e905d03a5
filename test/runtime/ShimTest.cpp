//===- ShimTest.cpp - The C shim against direct ATen calls ----------------===//
//
// Every operator called through the shim must give bit-for-bit what calling
// the same ATen overload directly gives, and every misuse must come back as a
// status and a message.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/ops/_efficientzerotensor.h>
#include <ATen/ops/_neg_view.h>
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_to_copy.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/convolution.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/index.h>
#include <ATen/ops/max.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/split.h>
#include <ATen/ops/view.h>
#include <ATen/ops/zeros.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

// Owns one handle reference, like generated code does between calls.
class Handle {
public:
  Handle() = default;
  explicit Handle(at::Tensor t) : t_(dync::shim::releaseToHandle(std::move(t))) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { dync_tensor_release(t_); }
  dync_tensor* get() const { return t_; }
  dync_tensor** out() {
    dync_tensor_release(t_);
    t_ = nullptr;
    return &t_;
  }
  at::Tensor tensor() const { return dync::shim::toTensor(t_); }

private:
  dync_tensor* t_ = nullptr;
};

// Bit-for-bit: same dtype, sizes, strides and element bytes.
void expectIdentical(const at::Tensor& expected, const Handle& actual) {
  ASSERT_NE(actual.get(), nullptr);
  at::Tensor got = actual.tensor();
  EXPECT_EQ(expected.scalar_type(), got.scalar_type());
  EXPECT_EQ(expected.sizes(), got.sizes());
  EXPECT_EQ(expected.strides(), got.strides());
  EXPECT_TRUE(at::equal(expected, got));
}

class ShimTest : public ::testing::Test {
protected:
  void SetUp() override { stack = dync_stack_new(); }
  void TearDown() override { dync_stack_free(stack); }

  dync_op* lookup(const char* name, const char* overload) {
    dync_op* op = nullptr;
    EXPECT_EQ(dync_op_lookup(name, overload, &op), DYNC_OK) << dync_last_error();
    return op;
  }

  // Calls and expects success.
  void call(const dync_op* op) { ASSERT_EQ(dync_op_call(op, stack), DYNC_OK) << dync_last_error(); }

  void takeTensor(size_t i, Handle& out) {
    ASSERT_EQ(dync_stack_take_tensor(stack, i, out.out()), DYNC_OK) << dync_last_error();
  }

  // Pushes x, calls aten::relu and expects exactly relu(x) back.
  void expectRelu(const at::Tensor& x) {
    Handle hx(x), out;
    dync_stack_push_tensor(stack, hx.get());
    call(lookup("aten::relu", "default"));
    takeTensor(0, out);
    expectIdentical(at::relu(x), out);
  }

  dync_stack* stack = nullptr;
};

TEST_F(ShimTest, Addmm) {
  at::Tensor b = at::randn({3}), x = at::randn({2, 4}), w = at::randn({4, 3});
  Handle hb(b), hx(x), hw(w);
  dync_op* op = lookup("aten::addmm", "default");
  ASSERT_NE(op, nullptr);
  dync_stack_push_tensor(stack, hb.get());
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor(stack, hw.get());
  call(op); // beta and alpha from the schema
  ASSERT_EQ(dync_stack_num_results(stack), 1u);
  EXPECT_EQ(dync_stack_result_kind(stack, 0), DYNC_VALUE_TENSOR);
  Handle out;
  takeTensor(0, out);
  expectIdentical(at::addmm(b, x, w), out);

  // Explicit beta/alpha, ints where the schema says Scalar.
  dync_stack_clear(stack);
  dync_stack_push_tensor(stack, hb.get());
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor(stack, hw.get());
  dync_stack_push_int(stack, 2);
  dync_stack_push_double(stack, 0.5);
  call(op);
  takeTensor(0, out);
  expectIdentical(at::addmm(b, x, w, 2, 0.5), out);
}

TEST_F(ShimTest, LookupIsCachedAndAcceptsBothDefaultSpellings) {
  dync_op* a = lookup("aten::relu", "default");
  dync_op* b = lookup("aten::relu", "");
  dync_op* c = lookup("aten::relu", nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_STREQ(dync_op_schema(a), "aten::relu(Tensor self) -> Tensor");
}

TEST_F(ShimTest, Relu) { expectRelu(at::randn({5, 7})); }

TEST_F(ShimTest, Softmax) {
  at::Tensor x = at::randn({4, 9});
  Handle hx(x), out;
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int(stack, 1);
  dync_stack_push_bool(stack, 0);
  call(lookup("aten::_softmax", "default"));
  takeTensor(0, out);
  expectIdentical(at::_softmax(x, 1, false), out);
}

TEST_F(ShimTest, Convolution) {
  at::Tensor input = at::randn({2, 3, 8, 8}), weight = at::randn({4, 3, 3, 3}),
             bias = at::randn({4});
  Handle hi(input), hw(weight), hb(bias), out;
  const int64_t stride[] = {2, 1}, padding[] = {1, 1}, dilation[] = {1, 1}, outPad[] = {0, 0};
  dync_stack_push_tensor(stack, hi.get());
  dync_stack_push_tensor(stack, hw.get());
  dync_stack_push_tensor(stack, hb.get());
  dync_stack_push_int_list(stack, stride, 2);
  dync_stack_push_int_list(stack, padding, 2);
  dync_stack_push_int_list(stack, dilation, 2);
  dync_stack_push_bool(stack, 0);
  dync_stack_push_int_list(stack, outPad, 2);
  dync_stack_push_symint(stack, 1);
  call(lookup("aten::convolution", "default"));
  takeTensor(0, out);
  expectIdentical(at::convolution(input, weight, bias, {2, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1),
                  out);

  // No bias: an optional tensor given as None.
  dync_stack_push_tensor(stack, hi.get());
  dync_stack_push_tensor(stack, hw.get());
  dync_stack_push_none(stack);
  dync_stack_push_int_list(stack, stride, 2);
  dync_stack_push_int_list(stack, padding, 2);
  dync_stack_push_int_list(stack, dilation, 2);
  dync_stack_push_bool(stack, 0);
  dync_stack_push_int_list(stack, outPad, 2);
  dync_stack_push_int(stack, 1);
  call(lookup("aten::convolution", "default"));
  takeTensor(0, out);
  expectIdentical(at::convolution(input, weight, {}, {2, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1),
                  out);
}

TEST_F(ShimTest, NativeLayerNormHasThreeResults) {
  at::Tensor x = at::randn({3, 5, 8}), w = at::randn({8}), b = at::randn({8});
  Handle hx(x), hw(w), hb(b);
  const int64_t shape[] = {8};
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int_list(stack, shape, 1);
  dync_stack_push_tensor(stack, hw.get());
  dync_stack_push_tensor(stack, hb.get());
  dync_stack_push_double(stack, 1e-5);
  call(lookup("aten::native_layer_norm", "default"));
  ASSERT_EQ(dync_stack_num_results(stack), 3u);
  auto [y, mean, rstd] = at::native_layer_norm(x, {8}, w, b, 1e-5);
  Handle hy, hmean, hrstd;
  takeTensor(0, hy);
  takeTensor(1, hmean);
  takeTensor(2, hrstd);
  expectIdentical(y, hy);
  expectIdentical(mean, hmean);
  expectIdentical(rstd, hrstd);
}

TEST_F(ShimTest, MaxDim) {
  at::Tensor x = at::randn({4, 6});
  Handle hx(x), values, indices;
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int(stack, 1);
  dync_stack_push_bool(stack, 1);
  call(lookup("aten::max", "dim"));
  ASSERT_EQ(dync_stack_num_results(stack), 2u);
  auto [v, i] = at::max(x, 1, true);
  takeTensor(0, values);
  takeTensor(1, indices);
  expectIdentical(v, values);
  expectIdentical(i, indices);
}

TEST_F(ShimTest, ViewWithIntList) {
  at::Tensor x = at::randn({2, 3, 4});
  Handle hx(x), out;
  const int64_t size[] = {6, -1};
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int_list(stack, size, 2);
  call(lookup("aten::view", "default"));
  takeTensor(0, out);
  expectIdentical(x.view({6, -1}), out);
  // A view shares storage with its base.
  EXPECT_EQ(dync_tensor_data_ptr(out.get()), x.data_ptr());
  EXPECT_EQ(dync_tensor_dim(out.get()), 2);
  EXPECT_EQ(dync_tensor_sizes(out.get())[1], 4);
}

TEST_F(ShimTest, CatWithTensorList) {
  at::Tensor a = at::randn({2, 3}), b = at::randn({4, 3});
  Handle ha(a), hb(b), out;
  const dync_tensor* list[] = {ha.get(), hb.get()};
  dync_op* cat = lookup("aten::cat", "default");
  dync_stack_push_tensor_list(stack, list, 2);
  call(cat); // dim defaults to 0
  takeTensor(0, out);
  expectIdentical(at::cat({a, b}), out);

  at::Tensor c = at::randn({2, 5});
  Handle hc(c);
  const dync_tensor* list2[] = {ha.get(), hc.get()};
  dync_stack_push_tensor_list(stack, list2, 2);
  dync_stack_push_int(stack, -1);
  call(cat);
  takeTensor(0, out);
  expectIdentical(at::cat({a, c}, -1), out);
}

TEST_F(ShimTest, ToDtypeAndToCopyWithKeywordDtype) {
  at::Tensor x = at::mul(at::randn({3, 4}), 100);
  Handle hx(x), out;
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_dtype(stack, DYNC_DTYPE_FLOAT64);
  call(lookup("aten::to", "dtype"));
  takeTensor(0, out);
  expectIdentical(x.to(at::kDouble), out);
  EXPECT_EQ(dync_tensor_dtype(out.get()), DYNC_DTYPE_FLOAT64);

  // _to_copy's dtype is keyword-only; it is given positionally, and the
  // layout and device in the middle ask for their defaults.
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_dtype(stack, DYNC_DTYPE_INT32);
  dync_stack_push_default(stack);
  dync_stack_push_default(stack);
  call(lookup("aten::_to_copy", "default"));
  takeTensor(0, out);
  expectIdentical(at::_to_copy(x, at::kInt), out);
}

TEST_F(ShimTest, MulScalarFromDoubleAndInt) {
  at::Tensor x = at::randn({10});
  Handle hx(x), out;
  dync_op* mul = lookup("aten::mul", "Scalar");
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_double(stack, 2.5);
  call(mul);
  takeTensor(0, out);
  expectIdentical(at::mul(x, 2.5), out);

  at::Tensor i = at::arange(10);
  Handle hi(i);
  dync_stack_push_tensor(stack, hi.get());
  dync_stack_push_int(stack, 3);
  call(mul);
  takeTensor(0, out);
  expectIdentical(at::mul(i, 3), out);
  EXPECT_EQ(dync_tensor_dtype(out.get()), DYNC_DTYPE_INT64);
}

TEST_F(ShimTest, IndexWithOptionalTensorList) {
  at::Tensor x = at::randn({5, 6}), idx = at::arange(0, 6, 2);
  Handle hx(x), hidx(idx), out;
  const dync_tensor* indices[] = {nullptr, hidx.get()};
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_optional_tensor_list(stack, indices, 2);
  call(lookup("aten::index", "Tensor"));
  takeTensor(0, out);
  expectIdentical(at::index(x, {std::nullopt, idx}), out);
}

TEST_F(ShimTest, SplitReturnsTensorList) {
  at::Tensor x = at::randn({7, 2});
  Handle hx(x);
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int(stack, 3);
  call(lookup("aten::split", "Tensor"));
  ASSERT_EQ(dync_stack_result_kind(stack, 0), DYNC_VALUE_TENSOR_LIST);
  dync_tensor* parts[4] = {};
  size_t count = 0;
  ASSERT_EQ(dync_stack_take_tensor_list(stack, 0, parts, 4, &count), DYNC_OK);
  ASSERT_EQ(count, 3u);
  std::vector<at::Tensor> expected = at::split(x, 3);
  for (size_t i = 0; i < count; ++i) {
    Handle h(dync::shim::toTensor(parts[i]));
    dync_tensor_release(parts[i]);
    expectIdentical(expected[i], h);
  }
}

TEST_F(ShimTest, HandlesAreReferenceCounted) {
  at::Tensor x = at::randn({4});
  EXPECT_EQ(x.use_count(), 1u);
  Handle hx(x); // x and the handle
  EXPECT_EQ(x.use_count(), 2u);
  dync_tensor_retain(hx.get());
  EXPECT_EQ(x.use_count(), 3u);
  dync_tensor_release(hx.get());
  EXPECT_EQ(x.use_count(), 2u);
  // A stack holds its own references until cleared.
  dync_stack_push_tensor(stack, hx.get());
  EXPECT_EQ(x.use_count(), 3u);
  dync_stack_clear(stack);
  EXPECT_EQ(x.use_count(), 2u);
  // Results the caller took outlive the stack's.
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int_list(stack, std::vector<int64_t>{2, 2}.data(), 2);
  call(lookup("aten::view", "default"));
  Handle view;
  takeTensor(0, view);
  dync_stack_clear(stack);
  EXPECT_EQ(view.tensor().use_count(), 2u); // the handle and this temporary
  dync_tensor_release(nullptr);             // allowed
}

// ---- Errors: a status and a message, never an exception or a crash ----------

TEST_F(ShimTest, UnknownOperatorOrOverload) {
  dync_op* op = reinterpret_cast<dync_op*>(0x1);
  EXPECT_EQ(dync_op_lookup("aten::no_such_op", "default", &op), DYNC_ERR_UNKNOWN_OP);
  EXPECT_EQ(op, nullptr);
  EXPECT_NE(std::string(dync_last_error()).find("aten::no_such_op.default"), std::string::npos)
      << dync_last_error();
  EXPECT_EQ(dync_op_lookup("aten::relu", "Bogus", &op), DYNC_ERR_UNKNOWN_OP);
  EXPECT_NE(std::string(dync_last_error()).find("aten::relu.Bogus"), std::string::npos);
  EXPECT_EQ(dync_op_lookup(nullptr, "default", &op), DYNC_ERR_INVALID_ARGUMENT);
}

TEST_F(ShimTest, WrongArgumentKind) {
  dync_op* relu = lookup("aten::relu", "default");
  dync_stack_push_int(stack, 3);
  EXPECT_EQ(dync_op_call(relu, stack), DYNC_ERR_SCHEMA_MISMATCH);
  std::string message = dync_last_error();
  EXPECT_NE(message.find("argument 0 'self' expects Tensor but got int"), std::string::npos)
      << message;
  EXPECT_NE(message.find("aten::relu(Tensor self) -> Tensor"), std::string::npos) << message;
  EXPECT_EQ(dync_stack_num_results(stack), 0u);

  // A float where only an int fits is not silently truncated.
  at::Tensor x = at::randn({2, 3});
  Handle hx(x);
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_double(stack, 1.0);
  dync_stack_push_bool(stack, 0);
  EXPECT_EQ(dync_op_call(lookup("aten::_softmax", "default"), stack), DYNC_ERR_SCHEMA_MISMATCH);
  EXPECT_NE(std::string(dync_last_error()).find("'dim' expects int but got float"),
            std::string::npos)
      << dync_last_error();

  // A tensor list where an int list belongs.
  const dync_tensor* list[] = {hx.get()};
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor_list(stack, list, 1);
  EXPECT_EQ(dync_op_call(lookup("aten::view", "default"), stack), DYNC_ERR_SCHEMA_MISMATCH);
}

TEST_F(ShimTest, WrongArgumentCount) {
  at::Tensor x = at::randn({2});
  Handle hx(x);
  dync_op* relu = lookup("aten::relu", "default");
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor(stack, hx.get());
  EXPECT_EQ(dync_op_call(relu, stack), DYNC_ERR_SCHEMA_MISMATCH);
  EXPECT_NE(std::string(dync_last_error()).find("takes 1 arguments but 2 were pushed"),
            std::string::npos)
      << dync_last_error();

  // Missing a required argument (mat2), and a default asked for where there
  // is none.
  dync_op* addmm = lookup("aten::addmm", "default");
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor(stack, hx.get());
  EXPECT_EQ(dync_op_call(addmm, stack), DYNC_ERR_SCHEMA_MISMATCH);
  EXPECT_NE(std::string(dync_last_error()).find("'mat2' has no default"), std::string::npos)
      << dync_last_error();
  dync_stack_push_default(stack);
  EXPECT_EQ(dync_op_call(relu, stack), DYNC_ERR_SCHEMA_MISMATCH);
}

TEST_F(ShimTest, BadPushPoisonsTheCall) {
  EXPECT_EQ(dync_stack_push_tensor(stack, nullptr), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dync_stack_push_dtype(stack, 1000), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dync_op_call(lookup("aten::relu", "default"), stack), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dync_last_error()).find("NULL tensor pushed"), std::string::npos)
      << dync_last_error();
  // The call reset the stack: it is usable again.
  expectRelu(at::randn({3}));
}

TEST_F(ShimTest, AtenExceptionBecomesStatus) {
  at::Tensor b = at::randn({3}), x = at::randn({2, 4}), w = at::randn({5, 3});
  Handle hb(b), hx(x), hw(w);
  dync_stack_push_tensor(stack, hb.get());
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_tensor(stack, hw.get());
  EXPECT_EQ(dync_op_call(lookup("aten::addmm", "default"), stack), DYNC_ERR_ATEN);
  EXPECT_NE(std::string(dync_last_error()).find("cannot be multiplied"), std::string::npos)
      << dync_last_error();
  EXPECT_EQ(dync_stack_num_results(stack), 0u);

  // view with an impossible size.
  const int64_t size[] = {7};
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int_list(stack, size, 1);
  EXPECT_EQ(dync_op_call(lookup("aten::view", "default"), stack), DYNC_ERR_ATEN);
  EXPECT_NE(std::string(dync_last_error()).find("invalid for input of size 8"), std::string::npos)
      << dync_last_error();
}

TEST_F(ShimTest, ResultMisuse) {
  at::Tensor x = at::randn({4, 6});
  Handle hx(x), out;
  dync_stack_push_tensor(stack, hx.get());
  dync_stack_push_int(stack, 1);
  call(lookup("aten::max", "dim"));
  int64_t i = 0;
  EXPECT_EQ(dync_stack_take_int(stack, 0, &i), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dync_last_error()).find("result 0 is Tensor, not int"), std::string::npos)
      << dync_last_error();
  EXPECT_EQ(dync_stack_take_tensor(stack, 2, out.out()), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dync_stack_result_kind(stack, 2), DYNC_VALUE_OTHER);
  EXPECT_EQ(dync_stack_take_tensor(stack, 0, nullptr), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dync_op_call(nullptr, stack), DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(dync_tensor_dim(nullptr), -1);
  EXPECT_EQ(dync_tensor_sizes(nullptr), nullptr);
}

// tensor_info reads in one call what the single accessors read one by one.
TEST(ShimApiTest, TensorInfoAgreesWithTheAccessors) {
  auto check = [](const at::Tensor& tensor) {
    SCOPED_TRACE(tensor.toString() + " " + c10::str(tensor.sizes()) + " " +
                 c10::str(tensor.strides()));
    dync_tensor* t = dync::shim::releaseToHandle(at::Tensor(tensor));
    dync_tensor_info info;
    ASSERT_EQ(dync_tensor_info_of(t, &info), 1);
    EXPECT_EQ(info.dim, dync_tensor_dim(t));
    EXPECT_EQ(info.sizes, dync_tensor_sizes(t));
    EXPECT_EQ(info.strides, dync_tensor_strides(t));
    EXPECT_EQ(info.dtype, dync_tensor_dtype(t));
    EXPECT_EQ(info.device_type, dync_tensor_device_type(t));
    EXPECT_EQ(info.device_index, dync_tensor_device_index(t));
    EXPECT_EQ(info.requires_grad, dync_tensor_requires_grad(t));
    EXPECT_EQ(info.is_contiguous, dync_tensor_is_contiguous(t));
    // A plain dense tensor has none of the flags.
    EXPECT_EQ(info.flags, 0);
    dync_tensor_release(t);
  };
  check(at::randn({3, 4}));
  check(at::randn({3, 4}).t());
  check(at::randn({2, 3}, at::kDouble).requires_grad_(true));
  check(at::zeros({}, at::kLong));
  check(at::randn({5, 1, 2}).expand({5, 7, 2}));

  dync_tensor_info info;
  // Negative and conjugate views, and a zero tensor, are flagged; the
  // conjugate of a real tensor is the tensor itself.
  auto flags = [&](const at::Tensor& tensor) {
    dync_tensor* t = dync::shim::releaseToHandle(at::Tensor(tensor));
    EXPECT_EQ(dync_tensor_info_of(t, &info), 1);
    dync_tensor_release(t);
    return info.flags;
  };
  EXPECT_EQ(flags(at::_neg_view(at::randn({3}))), DYNC_TENSOR_NEG);
  EXPECT_EQ(flags(at::randn({3}, at::kComplexFloat).conj()), DYNC_TENSOR_CONJ);
  EXPECT_EQ(flags(at::randn({3}).conj()), 0);
  EXPECT_EQ(flags(at::_efficientzerotensor({3}, at::kFloat)), DYNC_TENSOR_OTHER_KEYS);
  EXPECT_EQ(dync_tensor_info_of(nullptr, &info), 0);
  // A sparse tensor has no plain strides.
  dync_tensor* sparse = dync::shim::releaseToHandle(at::randn({3, 3}).to_sparse());
  EXPECT_EQ(dync_tensor_info_of(sparse, &info), 0);
  EXPECT_EQ(dync_tensor_info_of(sparse, nullptr), 0);
  dync_tensor_release(sparse);
}

TEST(ShimApiTest, TableIsComplete) {
  dync_shim_api api{};
  dync_shim_fill_api(&api);
  EXPECT_EQ(api.size, sizeof(dync_shim_api));
  EXPECT_EQ(api.abi_version, static_cast<uint32_t>(DYNC_SHIM_ABI_VERSION));
  EXPECT_EQ(dync_shim_abi_version(), DYNC_SHIM_ABI_VERSION);
  // Every core slot is set; the Python ones stay for the Python library.
  const char* begin = reinterpret_cast<const char*>(&api.last_error);
  const char* end = reinterpret_cast<const char*>(&api.tensor_from_pyobject);
  for (const char* p = begin; p < end; p += sizeof(void*)) {
    void* slot;
    std::memcpy(&slot, p, sizeof(slot));
    EXPECT_NE(slot, nullptr) << "slot at offset " << (p - reinterpret_cast<const char*>(&api));
  }
  EXPECT_EQ(api.tensor_from_pyobject, nullptr);
  // So are the core slots appended after the first Python ones, and every
  // Python slot appended after them stays NULL.
  EXPECT_NE(api.grad_mode_enabled, nullptr);
  EXPECT_NE(api.default_dtype, nullptr);
  const char* python = reinterpret_cast<const char*>(&api.py_instance_attr);
  const char* pythonEnd = reinterpret_cast<const char*>(&api.stack_push_wrapped_double);
  for (const char* p = python; p < pythonEnd; p += sizeof(void*)) {
    void* slot;
    std::memcpy(&slot, p, sizeof(slot));
    EXPECT_EQ(slot, nullptr) << "slot at offset " << (p - reinterpret_cast<const char*>(&api));
  }
  // The core slots appended after those are set again.
  EXPECT_NE(api.stack_push_wrapped_double, nullptr);
  EXPECT_NE(api.stack_push_wrapped_int, nullptr);
  EXPECT_NE(api.stack_push_wrapped_bool, nullptr);
  EXPECT_NE(api.tensor_empty_strided, nullptr);
  EXPECT_NE(api.parallel_for, nullptr);
  EXPECT_NE(api.tensor_view_storage, nullptr);
  EXPECT_NE(api.tensor_info, nullptr);
  // The torch Python reports is the libtorch the shim was built against
  // ("2.13.0+cpu" starts with "2.13.0+").
  EXPECT_EQ(std::string(DYNC_TEST_TORCH_VERSION).rfind(std::string(dync_shim_torch_version()), 0),
            0u);
}

} // namespace
