# 64-bit and 32-bit ARM phones, and the x86_64 emulator. API 24 (Android 7.0) is the
# first with the app linker namespaces that <uses-native-library> (AndroidManifest.xml)
# is about; older releases open libOpenCL.so without it.
APP_ABI := arm64-v8a armeabi-v7a x86_64
APP_PLATFORM := android-24
APP_BUILD_SCRIPT := $(call my-dir)/Android.mk
