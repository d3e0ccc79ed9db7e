# ndk-build: libtinyinfer_jni.so from the JNI bridge and tinyinfer.h (nothing else is
# linked: OpenCL is opened at run time). From examples/android: ndk-build
LOCAL_PATH := $(call my-dir)
include $(CLEAR_VARS)
LOCAL_MODULE := tinyinfer_jni
LOCAL_SRC_FILES := tinyinfer_jni.c
# tinyinfer.h at the repository root, embed.h in examples/
LOCAL_C_INCLUDES := $(LOCAL_PATH)/../../.. $(LOCAL_PATH)/../..
LOCAL_CFLAGS := -std=c99 -O2 -Wall -Wextra
LOCAL_LDLIBS := -lm -ldl
include $(BUILD_SHARED_LIBRARY)
