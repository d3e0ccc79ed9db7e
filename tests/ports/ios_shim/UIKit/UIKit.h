/* SYNTAX-CHECK SHIM, not Apple's header: see tests/ports/ios_shim/README.md. Only what
 * examples/ios/TIClassifier.m uses, with Apple's names and signatures. */
#ifndef TI_SHIM_UIKIT_H
#define TI_SHIM_UIKIT_H
#import <Foundation/Foundation.h>
#import <CoreGraphics/CoreGraphics.h>
@interface UIImage : NSObject
@property(nonatomic, readonly) CGImageRef CGImage;
@end
#endif
