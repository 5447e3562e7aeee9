#include <gtest/gtest.h>
TEST(Dummy, Ok) { EXPECT_TRUE(true); }
