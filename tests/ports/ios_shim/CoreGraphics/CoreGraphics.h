/* SYNTAX-CHECK SHIM, not Apple's header: see tests/ports/ios_shim/README.md. Only what
 * examples/ios/TIClassifier.m uses, with Apple's names and signatures. */
#ifndef TI_SHIM_COREGRAPHICS_H
#define TI_SHIM_COREGRAPHICS_H
#include <stddef.h>
#include <stdint.h>
typedef double CGFloat;
typedef struct CGPoint { CGFloat x, y; } CGPoint;
typedef struct CGSize { CGFloat width, height; } CGSize;
typedef struct CGRect { CGPoint origin; CGSize size; } CGRect;
static inline CGRect CGRectMake(CGFloat x, CGFloat y, CGFloat w, CGFloat h) {
    CGRect r;
    r.origin.x = x, r.origin.y = y, r.size.width = w, r.size.height = h;
    return r;
}
typedef struct CGImage *CGImageRef;
typedef struct CGColorSpace *CGColorSpaceRef;
typedef struct CGContext *CGContextRef;
typedef uint32_t CGBitmapInfo;
enum { kCGImageAlphaNoneSkipLast = 5, kCGImageAlphaPremultipliedLast = 1 };
enum { kCGBitmapByteOrder32Big = 4u << 12 };
size_t CGImageGetWidth(CGImageRef image);
size_t CGImageGetHeight(CGImageRef image);
CGColorSpaceRef CGColorSpaceCreateDeviceRGB(void);
void CGColorSpaceRelease(CGColorSpaceRef space);
CGContextRef CGBitmapContextCreate(void *data, size_t width, size_t height,
                                   size_t bitsPerComponent, size_t bytesPerRow,
                                   CGColorSpaceRef space, uint32_t bitmapInfo);
void CGContextDrawImage(CGContextRef c, CGRect rect, CGImageRef image);
void CGContextRelease(CGContextRef c);
#endif
