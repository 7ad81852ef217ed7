"""What `tfrewrite verify` needs to replay the loop of TF-GAN's ESRGAN second
phase (`tensorflow_gan/examples/esrgan/train_lib.py`, `train_esrgan(hparams,
data)`), as a user of that project would write it.

The second phase starts from the generator the first phase saved under
`hparams.model_dir`: this harness saves a freshly built one in a temporary
folder. Images are small (64 x 64, one residual block) and few (three
batches, the last one short) so the replay takes seconds on a CPU; the
ImageNet VGG19 of the perceptual loss gets verify's seeded stand-in weights
when it is not in Keras' cache.
"""

import os
import tempfile

import tensorflow as tf
from tensorflow_gan.examples.esrgan import networks, train_lib


def build():
    folder = tempfile.mkdtemp(prefix="esrgan-harness-")
    hparams = train_lib.HParams(
        batch_size=2, scale=4, model_dir=folder, phase_1=False, phase_2=False,
        hr_dimension=64, data_dir=folder, print_steps=2, trunk_size=1, total_steps=3,
        decay_steps=1, decay_factor=0.5, lr=1e-4, beta_1=0.9, beta_2=0.99, init_lr=5e-5,
        loss_type="L1", lambda_=0.005, eta=0.01, image_dir=folder,
    )  # fmt: skip
    generator = networks.generator_network(hparams)
    os.makedirs(folder + "/Phase_1/generator", exist_ok=True)
    generator.save(folder + "/Phase_1/generator")
    high = tf.random.stateless_uniform([5, 64, 64, 3], seed=[3, 7], maxval=255.0)
    low = tf.image.resize(high, [16, 16], method="bicubic")
    data = tf.data.Dataset.from_tensor_slices((low, high)).batch(2)
    return {"hparams": hparams, "data": data}
