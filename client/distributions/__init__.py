"""Client API: tf.compat.v1.distributions (deprecated in TF, still used by TF1 programs):
Normal, Bernoulli, Categorical, Uniform, Beta, Gamma, Exponential, Laplace, Multinomial,
Dirichlet, DirichletMultinomial, StudentT and kl_divergence between the pairs TF registers."""

from client.distributions.continuous import (
    Exponential,
    Gamma,
    Laplace,
    Normal,
    Uniform,
    kl_gamma_gamma,
    kl_normal_normal,
)
from client.distributions.dirichlet_multinomial import DirichletMultinomial
from client.distributions.discrete import (
    Bernoulli,
    Categorical,
    Multinomial,
    kl_bernoulli_bernoulli,
    kl_categorical_categorical,
)
from client.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    ReparameterizationType,
)
from client.distributions.kullback_leibler import RegisterKL, kl_divergence
from client.distributions.ratio import (
    Beta,
    Dirichlet,
    StudentT,
    kl_beta_beta,
    kl_dirichlet_dirichlet,
)

for _a, _b, _fn in (
    (Normal, Normal, kl_normal_normal),
    (Gamma, Gamma, kl_gamma_gamma),
    (Bernoulli, Bernoulli, kl_bernoulli_bernoulli),
    (Categorical, Categorical, kl_categorical_categorical),
    (Beta, Beta, kl_beta_beta),
    (Dirichlet, Dirichlet, kl_dirichlet_dirichlet),
):
    RegisterKL(_a, _b)(_fn)

__all__ = [
    "Bernoulli",
    "Beta",
    "Categorical",
    "Dirichlet",
    "DirichletMultinomial",
    "Distribution",
    "Exponential",
    "FULLY_REPARAMETERIZED",
    "Gamma",
    "Laplace",
    "Multinomial",
    "NOT_REPARAMETERIZED",
    "Normal",
    "RegisterKL",
    "ReparameterizationType",
    "StudentT",
    "Uniform",
    "kl_divergence",
]
