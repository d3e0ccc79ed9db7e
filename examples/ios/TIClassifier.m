/* TIClassifier.m: see TIClassifier.h. tinyinfer's implementation is compiled here, CPU
 * only; the pixels go into the model's input through examples/embed.h (bilinear resize,
 * the model's layout and dtype). Add tinyinfer.h and examples/embed.h to the Xcode
 * project's header search paths; link nothing else (Accelerate is not needed). */
#define TI_NO_OPENCL /* iOS has no OpenCL: the loader and GPU backend are left out */
#define TINYINFER_IMPLEMENTATION
#include "tinyinfer.h"
#include "embed.h"

#import "TIClassifier.h"
#import <CoreGraphics/CoreGraphics.h>
#import <UIKit/UIKit.h>

NSString *const TIClassifierErrorDomain = @"org.tinyinfer.TIClassifier";

static NSError *TIMakeError(NSInteger code, const char *message) {
    NSString *text = [NSString stringWithUTF8String:message] ?: @"tinyinfer error";
    return [NSError errorWithDomain:TIClassifierErrorDomain
                               code:code
                           userInfo:@{NSLocalizedDescriptionKey : text}];
}

@interface TIClassification ()
- (instancetype)initWithIndex:(NSInteger)index score:(double)score label:(nullable NSString *)label;
@end

@implementation TIClassification
- (instancetype)initWithIndex:(NSInteger)index score:(double)score label:(NSString *)label {
    if ((self = [super init])) {
        _index = index;
        _score = score;
        _label = [label copy];
    }
    return self;
}
- (NSString *)description {
    return [NSString stringWithFormat:@"%ld %.4f %@", (long)_index, _score, _label ?: @""];
}
@end

@implementation TIClassifier {
    ex_classifier _k; /* the model and its session */
    NSArray<NSString *> *_labels;
}

- (instancetype)initWithModelNamed:(NSString *)name
                            ofType:(NSString *)ext
                       labelsNamed:(NSString *)labelsName
                           threads:(NSInteger)threads
                             error:(NSError **)error {
    NSBundle *bundle = [NSBundle mainBundle];
    NSString *path = [bundle pathForResource:name ofType:ext];
    NSData *model = path ? [NSData dataWithContentsOfFile:path] : nil;
    if (model == nil) {
        if (error) *error = TIMakeError(TI_ERR_IO, "the model is not in the app bundle");
        return nil;
    }
    NSArray<NSString *> *labels = nil;
    if (labelsName != nil) {
        NSString *lpath = [bundle pathForResource:labelsName ofType:@"txt"];
        NSString *text = lpath ? [NSString stringWithContentsOfFile:lpath
                                                           encoding:NSUTF8StringEncoding
                                                              error:NULL]
                               : nil;
        labels = [text componentsSeparatedByString:@"\n"];
    }
    return [self initWithModelData:model labels:labels threads:threads error:error];
}

- (instancetype)initWithModelData:(NSData *)model
                           labels:(NSArray<NSString *> *)labels
                          threads:(NSInteger)threads
                            error:(NSError **)error {
    if ((self = [super init])) {
        ti_session_desc d;
        memset(&d, 0, sizeof d);
        d.backend = TI_BACKEND_CPU;
        d.num_threads = (int)threads;
        if (!ex_classifier_open(&_k, model.bytes, model.length, "model", &d)) {
            if (error) *error = TIMakeError(TI_ERR_BAD_MODEL, _k.error);
            return nil;
        }
        _labels = [labels copy];
    }
    return self;
}

- (void)dealloc {
    ex_classifier_close(&_k);
}

/* Runs the frame; wraps the classes, with labels (shifted by one for ImageNet's
 * "background" line when there is one label more than classes). */
- (NSArray<TIClassification *> *)runPixels:(const void *)pixels
                                     width:(int)width
                                    height:(int)height
                                  rowBytes:(size_t)rowBytes
                                     order:(ex_pixels)order
                                       top:(NSInteger)k
                                     error:(NSError **)error {
    if (k < 1 || k > 1000) {
        if (error) *error = TIMakeError(TI_ERR_INVALID_ARGUMENT, "top must be 1..1000");
        return nil;
    }
    int classes[1000];
    double scores[1000];
    int n;
    @synchronized(self) {
        n = ex_classifier_run(&_k, pixels, width, height, rowBytes, order, (int)k, classes, scores);
        if (n < 0) {
            if (error) *error = TIMakeError(TI_ERR_INVALID_ARGUMENT, _k.error);
            return nil;
        }
    }
    size_t n_out = ti_tensor_numel(ti_session_output(_k.session, 0));
    NSUInteger offset = _labels.count == n_out + 1 ? 1 : 0;
    NSMutableArray<TIClassification *> *out = [NSMutableArray arrayWithCapacity:(NSUInteger)n];
    for (int i = 0; i < n; i++) {
        NSUInteger li = (NSUInteger)classes[i] + offset;
        NSString *label = li < _labels.count ? _labels[li] : nil;
        [out addObject:[[TIClassification alloc] initWithIndex:classes[i] score:scores[i] label:label]];
    }
    return out;
}

- (NSArray<TIClassification *> *)classifyPixelBuffer:(CVPixelBufferRef)buffer
                                                 top:(NSInteger)k
                                               error:(NSError **)error {
    OSType format = CVPixelBufferGetPixelFormatType(buffer);
    if (format != kCVPixelFormatType_32BGRA && format != kCVPixelFormatType_32RGBA) {
        if (error)
            *error = TIMakeError(TI_ERR_UNSUPPORTED,
                                 "pixel buffer: expected kCVPixelFormatType_32BGRA or 32RGBA "
                                 "(AVCaptureVideoDataOutput videoSettings)");
        return nil;
    }
    if (CVPixelBufferLockBaseAddress(buffer, kCVPixelBufferLock_ReadOnly) != kCVReturnSuccess) {
        if (error) *error = TIMakeError(TI_ERR_INVALID_ARGUMENT, "pixel buffer: cannot lock it");
        return nil;
    }
    NSArray<TIClassification *> *out =
        [self runPixels:CVPixelBufferGetBaseAddress(buffer)
                  width:(int)CVPixelBufferGetWidth(buffer)
                 height:(int)CVPixelBufferGetHeight(buffer)
               rowBytes:CVPixelBufferGetBytesPerRow(buffer)
                  order:format == kCVPixelFormatType_32BGRA ? EX_PIXELS_BGRA8 : EX_PIXELS_RGBA8
                    top:k
                  error:error];
    CVPixelBufferUnlockBaseAddress(buffer, kCVPixelBufferLock_ReadOnly);
    return out;
}

- (NSArray<TIClassification *> *)classifyImage:(UIImage *)image
                                           top:(NSInteger)k
                                         error:(NSError **)error {
    CGImageRef cg = image.CGImage;
    size_t w = cg ? CGImageGetWidth(cg) : 0, h = cg ? CGImageGetHeight(cg) : 0;
    if (w == 0 || h == 0 || w > 16384 || h > 16384) {
        if (error) *error = TIMakeError(TI_ERR_INVALID_ARGUMENT, "image: no bitmap, or too large");
        return nil;
    }
    NSMutableData *rgba = [NSMutableData dataWithLength:w * h * 4];
    CGColorSpaceRef rgb = CGColorSpaceCreateDeviceRGB();
    CGContextRef ctx = CGBitmapContextCreate(rgba.mutableBytes, w, h, 8, w * 4, rgb,
                                             kCGImageAlphaNoneSkipLast | kCGBitmapByteOrder32Big);
    CGColorSpaceRelease(rgb);
    if (ctx == NULL) {
        if (error) *error = TIMakeError(TI_ERR_OUT_OF_MEMORY, "image: cannot make a bitmap");
        return nil;
    }
    CGContextDrawImage(ctx, CGRectMake(0, 0, (CGFloat)w, (CGFloat)h), cg);
    CGContextRelease(ctx);
    return [self runPixels:rgba.bytes
                     width:(int)w
                    height:(int)h
                  rowBytes:w * 4
                     order:EX_PIXELS_RGBA8
                       top:k
                     error:error];
}

@end
