"""Sources shared by the fast and TensorFlow tests of losses an optimizer's
`minimize` differentiates (`opt.minimize(loss, var_list)`)."""

MINIMIZED = """
import tensorflow as tf


def build(model, optimizer):
    @tf.function
    def squared_error(x, y):
        return tf.reduce_mean((model(x) - y) ** 2)

    @tf.function
    def fit_step(x, y):
        def objective():
            return squared_error(x, y)

        optimizer.minimize(objective, model.trainable_variables)
        return objective()

    return fit_step
"""

# The same step handing `minimize` a lambda.
MINIMIZED_LAMBDA = MINIMIZED.replace(
    """        def objective():
            return squared_error(x, y)

        optimizer.minimize(objective, model.trainable_variables)
        return objective()""",
    """        optimizer.minimize(lambda: squared_error(x, y), model.trainable_variables)
        return squared_error(x, y)""",
)
