/* SYNTAX-CHECK SHIM, not Apple's header: see tests/ports/ios_shim/README.md. Only what
 * examples/ios/TIClassifier.m uses, with Apple's names and signatures. */
#ifndef TI_SHIM_COREVIDEO_H
#define TI_SHIM_COREVIDEO_H
#include <stddef.h>
#include <stdint.h>
typedef uint32_t OSType;
typedef int32_t CVReturn;
typedef uint64_t CVOptionFlags;
typedef struct __CVBuffer *CVPixelBufferRef;
enum { kCVReturnSuccess = 0 };
enum { kCVPixelBufferLock_ReadOnly = 0x00000001 };
enum { kCVPixelFormatType_32BGRA = 'BGRA', kCVPixelFormatType_32RGBA = 'RGBA' };
OSType CVPixelBufferGetPixelFormatType(CVPixelBufferRef pixelBuffer);
CVReturn CVPixelBufferLockBaseAddress(CVPixelBufferRef pixelBuffer, CVOptionFlags lockFlags);
CVReturn CVPixelBufferUnlockBaseAddress(CVPixelBufferRef pixelBuffer, CVOptionFlags unlockFlags);
void *CVPixelBufferGetBaseAddress(CVPixelBufferRef pixelBuffer);
size_t CVPixelBufferGetWidth(CVPixelBufferRef pixelBuffer);
size_t CVPixelBufferGetHeight(CVPixelBufferRef pixelBuffer);
size_t CVPixelBufferGetBytesPerRow(CVPixelBufferRef pixelBuffer);
#endif
