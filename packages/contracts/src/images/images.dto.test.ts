import { refused } from '../test-support/refused';
import { CreateStyleRequest, GenerationRequest, ProductImageRequest, UpscaleRequest } from './images.dto';

describe('image tool requests', () => {
  test('a generation makes 1 to 4 images from a prompt of 1 to 4000 characters', () => {
    expect(refused(GenerationRequest, { prompt: 'a bracket', nbr_images: 4 })).toEqual([]);
    expect(refused(GenerationRequest, { prompt: 'a bracket', nbr_images: 0 })).toEqual(['nbr_images']);
    expect(refused(GenerationRequest, { prompt: 'a bracket', nbr_images: 5 })).toEqual(['nbr_images']);
    expect(refused(GenerationRequest, { prompt: 'a bracket', nbr_images: 2.5 })).toEqual(['nbr_images']);
    expect(refused(GenerationRequest, { prompt: '' })).toEqual(['prompt']);
    expect(refused(GenerationRequest, { prompt: 'p'.repeat(4001) })).toEqual(['prompt']);
    expect(refused(GenerationRequest, { prompt: 'a bracket', style_id: 'blue' })).toEqual(['style_id']);
  });

  test('an image-to-image request inherits the generation fields; the reference is 1 to 2048 characters', () => {
    expect(
      refused(ProductImageRequest, { prompt: 'p', negative_prompt: 'blur', reference_image: 'f' }),
    ).toEqual([]);
    expect(refused(ProductImageRequest, { prompt: 'p', reference_image: '' })).toEqual(['reference_image']);
    expect(refused(ProductImageRequest, { prompt: 'p', nbr_images: 9 })).toEqual(['nbr_images']);
  });

  test('an upscale is by 1 to 4, clarity or generative', () => {
    expect(refused(UpscaleRequest, { image_path: 'f', scale_factor: 4, mode: 'generative' })).toEqual([]);
    expect(refused(UpscaleRequest, { image_path: 'f', scale_factor: 8 })).toEqual(['scale_factor']);
    expect(refused(UpscaleRequest, { image_path: 'f', mode: 'sharp' })).toEqual(['mode']);
  });

  test('a style has 1 to 8 reference images, each 1 to 2048 characters', () => {
    const style = (reference_images: unknown) =>
      refused(CreateStyleRequest, { name: 'flat', reference_images });
    expect(style(['a'])).toEqual([]);
    expect(style(Array(8).fill('a'))).toEqual([]);
    expect(style([])).toEqual(['reference_images']);
    expect(style(Array(9).fill('a'))).toEqual(['reference_images']);
    expect(style(['a', ''])).toEqual(['reference_images']);
    expect(style('a')).toEqual(['reference_images']);
  });
});
